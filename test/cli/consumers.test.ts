// `loops-sync consumers list|add|remove|reset` as an operator runs it: a real process against real Postgres,
// over consumers the backend's own replica.receive_changes / ack_changes moved.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "../support/db.ts";
import { runCli } from "../support/operator-run.ts";
import { orderChange, writeChanges } from "../support/write-changes.ts";

const TIMEOUT = 120_000;

describe("loops-sync consumers", () => {
  let db: TestDatabase;
  let env: Record<string, string>;
  const cli = (...args: string[]) => runCli(args, env, 60_000);
  beforeAll(async () => {
    db = await createTestDatabase();
    env = { DATABASE_URL: db.url };
    // Two changes written long ago (as prune's tests seed them), then one now.
    await db.sql`
      insert into replica.changes (resource, resource_id, merchant_id, operation, version, status, source, changed_at)
      values ('order', 'ord_1', 'mer_feed_1', 'insert', 1, 'placed', 'webhook', '2026-01-01T00:00:00Z'),
             ('order', 'ord_2', 'mer_other', 'insert', 1, 'placed', 'webhook', '2026-01-01T00:00:01Z')`;
    await writeChanges(db.sql, [orderChange("ord_1", 2, "accepted", "placed")]);
  });
  afterAll(async () => {
    await db?.drop();
  });

  it(
    "adds a filtered consumer from the start, lists its lag, and removes it",
    async () => {
      const added = await cli(
        "consumers",
        "add",
        "billing",
        "--resource",
        "order",
        "--merchant",
        "mer_feed_1",
        "--from-start",
        "--json",
      );
      expect({ code: added.code, stderr: added.stderr }).toEqual({ code: 0, stderr: "" });
      expect(JSON.parse(added.stdout)).toMatchObject({
        created: true,
        consumer: {
          name: "billing",
          resources: ["order"],
          merchantIds: ["mer_feed_1"],
          ackedThrough: 0,
          lagChanges: 2,
        },
      });
      const [first] = await db.sql`select position from replica.receive_changes('billing')`;
      await db.sql`select replica.ack_changes('billing', array[${first!.position}]::bigint[])`;

      const list = await cli("consumers", "list", "--json");
      expect(list.code).toBe(0);
      const [billing] = JSON.parse(list.stdout).consumers;
      expect(billing).toMatchObject({ name: "billing", lagChanges: 1, leased: 0 });
      expect(billing.lagSeconds).toBeGreaterThan(0);

      const text = await cli("consumers", "list");
      expect(text.stdout).toMatch(
        /^billing \(order; mer_feed_1\): acknowledged through \d+; lag 1 change\(s\)/m,
      );

      const removed = await cli("consumers", "remove", "billing");
      expect({ code: removed.code, out: removed.stdout.trim() }).toEqual({
        code: 0,
        out: "removed feed consumer billing",
      });
      expect(await db.sql`select * from sync.feed_consumers`).toEqual([]);
    },
    TIMEOUT,
  );

  it(
    "resets a consumer to a position or a time, handing those changes out again",
    async () => {
      await db.sql`select replica.create_consumer('ops')`;
      expect(await db.sql`select * from replica.receive_changes('ops')`).toEqual([]);
      const to = await cli("consumers", "reset", "ops", "--to", "0", "--json");
      expect({ code: to.code, stderr: to.stderr }).toEqual({ code: 0, stderr: "" });
      expect(JSON.parse(to.stdout).consumer).toMatchObject({ ackedThrough: 0, lagChanges: 3 });
      expect((await db.sql`select * from replica.receive_changes('ops')`).map((r) => r.resource_id)).toEqual([
        "ord_1",
        "ord_2",
      ]);
      // Since a time: only what was written from then on (ord_1's second change), leases forgotten.
      const since = await cli("consumers", "reset", "ops", "--since", "2026-06-01T00:00:00Z", "--json");
      expect(since.code).toBe(0);
      expect(JSON.parse(since.stdout).consumer).toMatchObject({ lagChanges: 1, leased: 0 });
      expect(
        (await db.sql`select version from replica.receive_changes('ops')`).map((r) => r.version),
      ).toEqual([2]);
    },
    TIMEOUT,
  );

  it(
    "refuses a bad name, an unknown consumer, a missing flag and a clashing filter with exit 2",
    async () => {
      const bad = await cli("consumers", "add", "no spaces");
      expect({ code: bad.code, stdout: bad.stdout }).toEqual({ code: 2, stdout: "" });
      expect(bad.stderr).toMatch(/'no spaces' is invalid for argument 'name'\. expected a consumer name/);
      const unknown = await cli("consumers", "reset", "ghost", "--to", "0");
      expect(unknown.code).toBe(2);
      expect(unknown.stderr).toMatch(/consumer_not_found: no feed consumer named ghost/);
      const neither = await cli("consumers", "reset", "ops");
      expect(neither.code).toBe(2);
      expect(neither.stderr).toMatch(/give --since ISO or --to POSITION/);
      const clash = await cli("consumers", "add", "ops", "--resource", "brand");
      expect(clash.code).toBe(2);
      expect(clash.stderr).toMatch(/consumer_exists: consumer ops exists with another filter/);
      const gone = await cli("consumers", "remove", "ghost");
      expect(gone.code).toBe(2);
    },
    TIMEOUT,
  );
});
