// The one coverage rule for order events, shared by the order batch, refresh_order and catch-up, on a real
// Postgres: which events the replica covers, and whether each is stale or applied.
import { settleCoveredOrderEvents } from "@loops-sync/db";
import { applyOrderIfNewer } from "@loops-sync/replica";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "../support/db.ts";
import { makeOrder } from "../support/make-order.ts";

const MERCHANT = "mer_settle";
let db: TestDatabase;

beforeAll(async () => {
  db = await createTestDatabase();
});
afterAll(async () => {
  await db?.drop();
});

/** Stores an order event (received now unless `receivedAt`), with `version` unless null. */
async function storeEvent(
  id: string,
  orderId: string,
  version: number | null,
  { outcome = "pending", merchantId = MERCHANT, receivedAt = new Date() } = {},
): Promise<void> {
  const data = version === null ? { order_id: orderId } : { order_id: orderId, version };
  await db.sql`
    insert into sync.events (id, type, merchant_id, created_at, received_at, source, payload, outcome)
    values (${id}, 'order.updated', ${merchantId}, now(), ${receivedAt}, 'webhook',
            ${db.sql.json({ id, type: "order.updated", data })}, ${outcome})`;
}

async function outcomes(ids: readonly string[]): Promise<Record<string, string>> {
  const rows = await db.sql<{ id: string; outcome: string }[]>`
    select id, outcome from sync.events where id = any(${ids as string[]}::text[])`;
  return Object.fromEntries(rows.map((r) => [r.id, r.outcome]));
}

describe("settleCoveredOrderEvents", () => {
  it("by id: covered up to the replica's version, stale up to the version before the write", async () => {
    await applyOrderIfNewer(db.sql, makeOrder({ id: "ord_s1", version: 3, merchantId: MERCHANT }));
    await storeEvent("evt_s1_v2", "ord_s1", 2);
    await storeEvent("evt_s1_v3", "ord_s1", 3);
    await storeEvent("evt_s1_v4", "ord_s1", 4);
    const write = { versionBefore: 2, receivedBefore: new Date() };
    const settled = await settleCoveredOrderEvents(db.sql, {
      events: ["evt_s1_v2", "evt_s1_v3", "evt_s1_v4"].map((eventId) => ({ eventId, ...write })),
    });
    expect(settled).toEqual({ stale: 1, applied: 1 });
    expect(await outcomes(["evt_s1_v2", "evt_s1_v3", "evt_s1_v4"])).toEqual({
      evt_s1_v2: "stale",
      evt_s1_v3: "applied",
      // The replica lacks version 4: a later fetch answers it.
      evt_s1_v4: "pending",
    });
  });

  it("covers an event without a version only when it was received before the fetch started", async () => {
    await applyOrderIfNewer(db.sql, makeOrder({ id: "ord_s2", version: 1, merchantId: MERCHANT }));
    const fetchStart = new Date();
    await storeEvent("evt_s2_before", "ord_s2", null, { receivedAt: new Date(fetchStart.getTime() - 1000) });
    await storeEvent("evt_s2_after", "ord_s2", null, { receivedAt: new Date(fetchStart.getTime() + 1000) });
    await storeEvent("evt_s2_unknown", "ord_s2", null, { receivedAt: new Date(fetchStart.getTime() - 1000) });
    await settleCoveredOrderEvents(db.sql, {
      events: [
        { eventId: "evt_s2_before", versionBefore: null, receivedBefore: fetchStart },
        { eventId: "evt_s2_after", versionBefore: null, receivedBefore: fetchStart },
        { eventId: "evt_s2_unknown", versionBefore: null, receivedBefore: null },
      ],
    });
    expect(await outcomes(["evt_s2_before", "evt_s2_after", "evt_s2_unknown"])).toEqual({
      evt_s2_before: "applied",
      evt_s2_after: "pending",
      evt_s2_unknown: "pending",
    });
  });

  it("by order: every open event of the merchant's order, failed ones repaired, settled ones kept", async () => {
    await applyOrderIfNewer(db.sql, makeOrder({ id: "ord_s3", version: 2, merchantId: MERCHANT }));
    await storeEvent("evt_s3_pending", "ord_s3", 2);
    await storeEvent("evt_s3_failed", "ord_s3", 1, { outcome: "failed" });
    await storeEvent("evt_s3_done", "ord_s3", 1, { outcome: "ignored_self" });
    await storeEvent("evt_s3_other_merchant", "ord_s3", 1, { merchantId: "mer_other" });
    const settled = await settleCoveredOrderEvents(db.sql, {
      orders: [{ merchantId: MERCHANT, orderId: "ord_s3", versionBefore: 1, receivedBefore: new Date() }],
    });
    expect(settled).toEqual({ applied: 1, stale: 1 });
    expect(
      await outcomes(["evt_s3_pending", "evt_s3_failed", "evt_s3_done", "evt_s3_other_merchant"]),
    ).toEqual({
      evt_s3_pending: "applied",
      evt_s3_failed: "stale",
      evt_s3_done: "ignored_self",
      evt_s3_other_merchant: "pending",
    });
  });

  it("leaves an order the replica lacks, and sends nothing for an empty selection", async () => {
    await storeEvent("evt_s4", "ord_s4_missing", 1);
    expect(
      await settleCoveredOrderEvents(db.sql, {
        events: [{ eventId: "evt_s4", versionBefore: null, receivedBefore: new Date() }],
      }),
    ).toEqual({});
    expect(await outcomes(["evt_s4"])).toEqual({ evt_s4: "pending" });
    expect(await settleCoveredOrderEvents(db.sql, {})).toEqual({});
  });
});
