// What prune must keep for forwarding (sync.forward_needed_from, sync.forward_keeps), and FORWARD_RESOURCES.

import { createLogger } from "@loops-sync/config";
import { pruneFinished, recordChanges } from "@loops-sync/db";
import { startForwarder } from "@loops-sync/worker";
import { afterEach, describe, expect, it } from "vitest";
import { startForwardEndpoint } from "#testkit/forward-endpoint";
import { waitFor } from "#testkit/wait-for";
import { createTestDatabase, type TestDatabase } from "../support/db.ts";
import { writeChanges } from "../support/forward-changes.ts";

const SECRET = `whsec_${Buffer.from("forward-keeps-test-secret-012345").toString("base64")}`;

describe("forwarding and prune", () => {
  let db: TestDatabase | undefined;
  afterEach(async () => {
    await db?.drop();
  });

  it("keeps nothing while forwarding was never on; while it runs, every change from the oldest undelivered one", async () => {
    db = await createTestDatabase();
    const sql = db.sql;
    const keeps = async (position: number) =>
      (await sql<{ k: boolean }[]>`select sync.forward_keeps(${position}::bigint) as k`)[0]!.k;
    const [none] = await sql<{ from: number | null }[]>`select sync.forward_needed_from() as from`;
    expect(none?.from).toBeNull();
    expect(await keeps(1)).toBe(false);

    // A forwarder that runs (recorded itself just now); forwarding turned off needs nothing (forward-off-prune).
    await sql`insert into sync.forward_progress (scanned_through, seen_at) values (10, now())`;
    expect(await keeps(10)).toBe(false);
    expect(await keeps(11)).toBe(true);
    // A dead change is kept: forward retry --dead sends it again.
    await sql`
      insert into sync.forward_deliveries (position, resource, resource_id, changed_at, age_from, dead_at)
      values (5, 'order', 'ord_1', now(), now(), now())`;
    const [from] = await sql<{ from: number }[]>`select sync.forward_needed_from() as from`;
    expect(from?.from).toBe(5);
    expect([await keeps(4), await keeps(5), await keeps(7)]).toEqual([false, true, true]);
  });

  it("prune keeps every change from the oldest one forwarding has not delivered", async () => {
    db = await createTestDatabase();
    await db.sql`
      insert into replica.changes (resource, resource_id, merchant_id, operation, source, changed_at)
      select 'order', 'ord_' || i, 'mer_1', 'update', 'webhook', now() - interval '40 days' + i * interval '1 ms'
      from generate_series(1, 50) as i order by i`;
    // Delivered through 30 except 20, which is dead: prune may take 1..19 only.
    await db.sql`insert into sync.forward_progress (scanned_through, seen_at) values (30, now())`;
    await db.sql`
      insert into sync.forward_deliveries (position, resource, resource_id, changed_at, age_from, dead_at)
      values (20, 'order', 'ord_20', now(), now(), now())`;
    const before = new Date(Date.now() - 35 * 86_400_000);
    const result = await pruneFinished({ sql: db.sql, before, batchSize: 7, restRatio: 0 });
    expect([result.changesDeleted, result.changesPrunedThrough]).toEqual([19, 19]);
    const [left] = await db.sql<
      { lowest: number }[]
    >`select min(position)::int as lowest from replica.changes`;
    expect(left?.lowest).toBe(20);

    // Delivered (the row gone): the rest up to what the scan reached may go too.
    await db.sql`delete from sync.forward_deliveries`;
    const again = await pruneFinished({ sql: db.sql, before, batchSize: 7, restRatio: 0 });
    expect(again.changesPrunedThrough).toBe(30);
  });

  it("forwards only FORWARD_RESOURCES", async () => {
    db = await createTestDatabase();
    const endpoint = await startForwardEndpoint({ secret: SECRET });
    const forwarder = await startForwarder({
      sql: db.sql,
      url: endpoint.url,
      secret: SECRET,
      resources: ["order"],
      pollIntervalMs: 200,
      logger: createLogger({ name: "forward-test", level: "silent" }),
    });
    try {
      await writeChanges(db.sql, { resources: 3, perResource: 2 });
      await db.sql.begin((tx) =>
        recordChanges(tx, [
          {
            resource: "order",
            resourceId: "ord_1",
            merchantId: "mer_1",
            operation: "insert",
            source: "webhook",
          },
        ]),
      );
      const [order] = await db.sql<{ position: number }[]>`
        select position from replica.changes where resource = 'order'`;
      await waitFor(
        async () => {
          const [p] = await db!.sql<{ done: boolean }[]>`
            select (select scanned_through from sync.forward_progress) >= ${order!.position}
              and not exists (select 1 from sync.forward_deliveries) as done`;
          return p?.done && endpoint.accepted().length > 0;
        },
        { what: "the feed scanned and the order delivered" },
      );
      // The channel changes were scanned and left out: no delivery row will ever send them.
      expect(endpoint.requests.map((r) => [r.resource, r.position])).toEqual([["order", order!.position]]);
    } finally {
      await forwarder.stop(1000);
      await endpoint.close();
    }
  });
});
