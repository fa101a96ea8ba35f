// verifyReplica: differences planted in the replica are found against the sandbox, and --repair removes them.

import { runBackfill, verifyReplica } from "@loops-sync/catchup";
import type { LoopsClient } from "@loops-sync/loops-client";
import { type Sandbox, startSandbox } from "@loops-sync/sandbox";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "../support/db.ts";
import { expectReplicaEqualsTruth, makeOrders, sandboxClient } from "../support/sandbox-orders.ts";

describe("verify", () => {
  let db: TestDatabase;
  let sandbox: Sandbox;
  let client: LoopsClient;
  const merchant = "mer_demo_1";

  beforeAll(async () => {
    db = await createTestDatabase();
    sandbox = await startSandbox({ port: 0 });
    client = sandboxClient(sandbox);
    makeOrders(sandbox, merchant, 30);
    await runBackfill({ sql: db.sql, client, merchantId: merchant });
  });

  afterAll(async () => {
    await sandbox?.close();
    await db?.drop();
  });

  it("finds nothing on a faithful replica", async () => {
    const result = await verifyReplica({ sql: db.sql, client, merchantId: merchant });
    expect(result.differences).toEqual([]);
    expect(result.merchants[0]?.ordersUpstream).toBe(30);
    expect(result.remaining).toBe(0);
  });

  it("lists every planted difference, and --repair removes them all", async () => {
    const [missing, older, mismatched] = sandbox.truth.orders(merchant).filter((o) => o.version > 1);
    await db.sql`delete from replica.orders where id = ${missing!.id}`;
    await db.sql`update replica.orders set version = version - 1 where id = ${older!.id}`;
    await db.sql`update replica.orders set status = 'cancelled' where id = ${mismatched!.id}`;
    await db.sql`
      insert into replica.orders (id, merchant_id, location_id, channel, status, version, created_at, updated_at, raw)
      select 'ord_planted_extra', merchant_id, location_id, channel, status, 1, created_at, updated_at, raw
      from replica.orders where id = ${older!.id}`;

    const found = await verifyReplica({ sql: db.sql, client, merchantId: merchant });
    const kinds = Object.fromEntries(found.differences.map((d) => [d.orderId, d.kind]));
    expect(kinds).toEqual({
      [missing!.id]: "missing",
      [older!.id]: "older",
      [mismatched!.id]: "status_mismatch",
      ord_planted_extra: "extra",
    });
    expect(found.remaining).toBe(4);
    expect(found.repaired).toBe(0);

    const repaired = await verifyReplica({ sql: db.sql, client, merchantId: merchant, repair: true });
    expect(repaired.repaired).toBe(4);
    expect(repaired.remaining).toBe(0);
    await expectReplicaEqualsTruth(db.sql, sandbox, merchant);
    // The repaired rows carry their children again.
    const [items] = await db.sql<{ n: number }[]>`
      select count(*)::int as n from replica.order_items where order_id = ${missing!.id}`;
    expect(items?.n).toBe(sandbox.truth.order(missing!.id)!.items.length);
    const after = await verifyReplica({ sql: db.sql, client, merchantId: merchant });
    expect(after.differences).toEqual([]);
  });
});
