// process_events (order events stored without our application id: `replay`, a source that did not know it)
// judges which order events the replica already covers by the same rule as the order refresher
// (settleCoveredOrderEvents): the same events get the same outcomes whichever way they came.

import { type EventEnvelope, storeEventsAndEnqueue } from "@loops-sync/db";
import type { RunningWorker } from "@loops-sync/worker";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { waitFor } from "#testkit/wait-for";
import { APPLICATION_ID, createHarness, type Harness, outcomes, settled } from "../support/worker-harness.ts";

const ORDER_FETCH = "GET /orders/{order_id}";
const MERCHANT = "mer_demo_1";

let h: Harness;
let worker: RunningWorker;
beforeAll(async () => {
  h = await createHarness();
  worker = await h.worker();
});
afterAll(async () => {
  await h?.close();
});

/** The orders the worker's order batches claim (first claims and joins) from now on. */
function claimedOrders(): Set<string> {
  const orders = new Set<string>();
  const add = ({ orders: claimed }: { orders: string[] }) => {
    for (const id of claimed) orders.add(id);
  };
  worker.orderBatches.events.on("claimed", add);
  worker.orderBatches.events.on("joined", add);
  return orders;
}

/** An order at version 3, applied through the queue; its three events, one per version. */
async function orderAtVersion3(): Promise<{ orderId: string; events: EventEnvelope[] }> {
  const order = h.sandbox.createOrder({ merchantId: MERCHANT });
  h.sandbox.advanceOrder(order.id);
  h.sandbox.advanceOrder(order.id);
  const events = (h.sandbox.truth.events() as unknown as EventEnvelope[]).filter(
    (e) => e.data.order_id === order.id,
  );
  expect(events.map((e) => e.data.version)).toEqual([1, 2, 3]);
  const v3 = await h.ingest((e) => e.id === events[2]!.id);
  await waitFor(() => settled(h.db, v3), { what: "version 3 applied" });
  return { orderId: order.id, events };
}

/** Copies of `events` under new ids (as a second delivery of them would be stored). */
const copies = (events: readonly EventEnvelope[], suffix: string) =>
  events.map((e) => ({ ...e, id: `${e.id}_${suffix}` }));

const byProcessEvents = (events: EventEnvelope[]) =>
  storeEventsAndEnqueue(h.db.sql, events, { source: "cli", applicationId: undefined });
const byQueue = (events: EventEnvelope[]) =>
  storeEventsAndEnqueue(h.db.sql, events, { source: "webhook", applicationId: APPLICATION_ID });

describe("process_events: order events the replica covers", () => {
  it("settles versions at or below the replica's as stale, without a fetch or a queue row, as the queue path does", async () => {
    const { orderId, events } = await orderAtVersion3();
    const fetches = h.calls(ORDER_FETCH);

    const claimed = claimedOrders();
    const viaJob = copies(events, "job");
    expect((await byProcessEvents(viaJob)).enqueued).toEqual(viaJob.map((e) => e.id));
    await waitFor(
      () =>
        settled(
          h.db,
          viaJob.map((e) => e.id),
        ),
      { what: "process_events settled them" },
    );
    expect(
      Object.values(
        await outcomes(
          h.db,
          viaJob.map((e) => e.id),
        ),
      ),
    ).toEqual(["stale", "stale", "stale"]);
    // Settled in process_events' own transaction: no batch ever took the order.
    expect(claimed.has(orderId)).toBe(false);

    const viaQueue = copies(events, "queue");
    expect((await byQueue(viaQueue)).queued).toEqual(viaQueue.map((e) => e.id));
    await waitFor(
      () =>
        settled(
          h.db,
          viaQueue.map((e) => e.id),
        ),
      { what: "the order batch settled them" },
    );
    expect(
      Object.values(
        await outcomes(
          h.db,
          viaQueue.map((e) => e.id),
        ),
      ),
    ).toEqual(["stale", "stale", "stale"]);
    expect(h.calls(ORDER_FETCH)).toBe(fetches);
  });

  it("queues an event without a version, and one newer than the replica, for a fetch", async () => {
    const { orderId, events } = await orderAtVersion3();
    h.sandbox.advanceOrder(orderId);
    const [newer] = (h.sandbox.truth.events() as unknown as EventEnvelope[]).filter(
      (e) => e.data.order_id === orderId && e.data.version === 4,
    );
    const unversioned = { ...events[2]!, id: `${events[2]!.id}_unversioned`, data: { order_id: orderId } };
    const claimed = claimedOrders();
    const fetches = h.calls(ORDER_FETCH);

    const ids = [unversioned.id, newer!.id];
    expect((await byProcessEvents([unversioned, newer!])).enqueued.sort()).toEqual([...ids].sort());
    await waitFor(() => settled(h.db, ids), { what: "both events settled" });
    expect(await outcomes(h.db, ids)).toEqual({ [unversioned.id]: "applied", [newer!.id]: "applied" });
    expect(claimed.has(orderId)).toBe(true);
    expect(h.calls(ORDER_FETCH)).toBeGreaterThan(fetches);
    const [row] = await h.db.sql<
      { version: number }[]
    >`select version from replica.orders where id = ${orderId}`;
    expect(row!.version).toBe(4);
  });
});
