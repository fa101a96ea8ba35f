import { applyOrderPage, repairOrder } from "@loops-sync/catchup";
import { createLogger } from "@loops-sync/config";
import type { Order } from "@loops-sync/loops-client";
import { applyOrderIfNewer } from "@loops-sync/replica";
import { createWorkerMetrics } from "@loops-sync/worker";
import { createOrderApplier } from "@loops-sync/worker/orders/order-applier";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "../support/db.ts";
import { makeOrder } from "../support/make-order.ts";

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase();
});
afterAll(async () => {
  await db.drop();
});

async function storeEvent(
  id: string,
  orderId: string,
  source: string,
  createdAt: string,
  outcome = "pending",
) {
  const payload = { id, type: "order.updated", data: { order_id: orderId } };
  await db.sql`
    insert into sync.events (id, type, merchant_id, created_at, source, payload, outcome)
    values (${id}, 'order.updated', 'mer_test', ${createdAt}, ${source}, ${payload as never}, ${outcome})`;
}

async function provenance(orderId: string) {
  const [row] = await db.sql<{ event_id: string | null; source: string | null }[]>`
    select last_change_event_id as event_id, last_change_source as source from replica.orders where id = ${orderId}`;
  return row;
}

describe("replica.orders provenance", () => {
  it("the applier records the newest of the events that queued the fetch, with its source", async () => {
    await storeEvent("evt_p_old", "ord_p1", "webhook", "2026-11-22T10:00:00Z");
    await storeEvent("evt_p_new", "ord_p1", "catchup", "2026-11-22T10:00:05Z");
    const applier = createOrderApplier({
      sql: db.sql,
      metrics: createWorkerMetrics(),
      logger: createLogger({ name: "test", level: "silent" }),
    });
    await applier.apply(makeOrder({ id: "ord_p1", version: 1 }), ["evt_p_new", "evt_p_old"]);
    expect(await provenance("ord_p1")).toEqual({ event_id: "evt_p_new", source: "catchup" });

    await storeEvent("evt_p_hook", "ord_p1", "webhook", "2026-11-22T10:01:00Z");
    await applier.apply(makeOrder({ id: "ord_p1", version: 2 }), ["evt_p_hook"]);
    expect(await provenance("ord_p1")).toEqual({ event_id: "evt_p_hook", source: "webhook" });
  });

  it("a copy the version gate keeps out leaves the row's provenance as it was", async () => {
    await storeEvent("evt_p_late", "ord_p1", "webhook", "2026-11-22T10:02:00Z");
    await applyOrderIfNewer(db.sql, makeOrder({ id: "ord_p1", version: 2 }), { eventIds: ["evt_p_late"] });
    await applyOrderPage(db.sql, [makeOrder({ id: "ord_p1", version: 1 })], { source: "backfill" });
    expect(await provenance("ord_p1")).toEqual({ event_id: "evt_p_hook", source: "webhook" });
  });

  it("a backfill page records 'backfill' and no event", async () => {
    await applyOrderPage(db.sql, [makeOrder({ id: "ord_p2", version: 1 })], { source: "backfill" });
    expect(await provenance("ord_p2")).toEqual({ event_id: null, source: "backfill" });
  });

  it("a refresh without named events records the order's newest open event, else the fallback", async () => {
    await storeEvent("evt_p3_done", "ord_p3", "webhook", "2026-11-22T11:00:09Z", "applied");
    await storeEvent("evt_p3_a", "ord_p3", "webhook", "2026-11-22T11:00:00Z");
    await storeEvent("evt_p3_b", "ord_p3", "catchup", "2026-11-22T11:00:01Z", "failed");
    await applyOrderIfNewer(db.sql, makeOrder({ id: "ord_p3", version: 1 }), { openEvent: true });
    expect(await provenance("ord_p3")).toEqual({ event_id: "evt_p3_b", source: "catchup" });
    await applyOrderPage(db.sql, [makeOrder({ id: "ord_p4", version: 1 })], {
      openEvent: true,
      source: "catchup",
    });
    expect(await provenance("ord_p4")).toEqual({ event_id: null, source: "catchup" });
  });

  it("verify --repair records 'repair'", async () => {
    await applyOrderIfNewer(db.sql, makeOrder({ id: "ord_p5", version: 2 }), { eventIds: [] });
    const upstream = makeOrder({ id: "ord_p5", version: 3 }) as unknown as Order;
    const difference = {
      merchantId: "mer_test",
      orderId: "ord_p5",
      kind: "older" as const,
      replica: { version: 2, status: "accepted" },
      upstream: { version: 3, status: "preparing" },
    };
    expect(await repairOrder(db.sql, difference, upstream)).toBe(true);
    expect(await provenance("ord_p5")).toEqual({ event_id: null, source: "repair" });
  });
});
