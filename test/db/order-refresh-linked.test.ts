// Migration 0017 on a real Postgres: queued order refreshes from before migration 0008 (no event id) are
// linked to their order's open events, so the worker settles every batch by event id.
import { readMigrations } from "@loops-sync/db";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "../support/db.ts";

const MERCHANT = "mer_legacy";
let db: TestDatabase;

beforeAll(async () => {
  db = await createTestDatabase();
});
afterAll(async () => {
  await db?.drop();
});

async function storeEvent(id: string, orderId: string, version: number, outcome = "pending"): Promise<void> {
  await db.sql`
    insert into sync.events (id, type, merchant_id, created_at, source, payload, outcome)
    values (${id}, 'order.updated', ${MERCHANT}, now(), 'webhook',
            ${db.sql.json({ id, type: "order.updated", data: { order_id: orderId, version } })}, ${outcome})`;
}

/** A row as a release before migration 0008 queued it: the order, but not the event. */
async function queueLegacy(orderId: string, version: number | null): Promise<void> {
  await db.sql`
    insert into sync.order_refresh (merchant_id, order_id, version, queued_at)
    values (${MERCHANT}, ${orderId}, ${version}, '2026-01-01T00:00:00Z')`;
}

async function runMigration0017(): Promise<void> {
  const migration = (await readMigrations()).find((m) => m.id === 17);
  expect(migration?.name).toBe("0017_order_refresh_linked.sql");
  await db.sql.unsafe(migration!.sql);
}

describe("migration 0017: order refreshes queued before 0008", () => {
  it("links each to its order's open events, drops those with none left, and keeps linked rows", async () => {
    await storeEvent("evt_l1_v1", "ord_l1", 1);
    await storeEvent("evt_l1_v2", "ord_l1", 2, "failed");
    await storeEvent("evt_l1_v0", "ord_l1", 0, "applied");
    await storeEvent("evt_l2_v1", "ord_l2", 1, "stale");
    await storeEvent("evt_l3_v5", "ord_l3", 5);
    await queueLegacy("ord_l1", null);
    await queueLegacy("ord_l1", 2);
    await queueLegacy("ord_l2", 1);
    // Already linked (queued as the inbox does since 0008): left as it is, and not linked twice.
    await db.sql`
      insert into sync.order_refresh (merchant_id, order_id, version, event_id)
      values (${MERCHANT}, 'ord_l3', 5, 'evt_l3_v5')`;

    await runMigration0017();

    const rows = await db.sql<
      { order_id: string; version: number | null; event_id: string; legacy: boolean }[]
    >`
      select order_id, version::int, event_id, queued_at = '2026-01-01T00:00:00Z' as legacy
      from sync.order_refresh order by event_id`;
    expect(rows).toEqual([
      { order_id: "ord_l1", version: 1, event_id: "evt_l1_v1", legacy: true },
      { order_id: "ord_l1", version: 2, event_id: "evt_l1_v2", legacy: true },
      { order_id: "ord_l3", version: 5, event_id: "evt_l3_v5", legacy: false },
    ]);
    // Run again (nothing left to link): a no-op.
    await runMigration0017();
    const [count] = await db.sql<{ n: number }[]>`select count(*)::int as n from sync.order_refresh`;
    expect(count!.n).toBe(3);
  });
});
