import { type EventEnvelope, storeEventsAndEnqueue } from "@loops-sync/db";
import { createWorkerMetrics } from "@loops-sync/worker";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { waitFor } from "#testkit/wait-for";
import { APPLICATION_ID, createHarness, type Harness, outcomes, settled } from "../support/worker-harness.ts";

const ORDER_FETCH = "GET /orders/{order_id}";
const MERCHANT = "mer_demo_1";

let h: Harness;
// A registry that already carries the series, as when receiver and worker share one process.
const { registry } = createWorkerMetrics();
beforeAll(async () => {
  h = await createHarness();
  await h.worker({ registry });
});
afterAll(async () => {
  await h?.close();
});

async function replicaOrder(id: string) {
  const [row] = await h.db.sql`select version, status, raw from replica.orders where id = ${id}`;
  return row;
}

const eventsOf = (orderId: string) => (e: EventEnvelope) => e.data.order_id === orderId;

describe("worker: order events", () => {
  it("mirrors an order and its lifecycle, with items and status history", async () => {
    const order = h.sandbox.createOrder({ merchantId: MERCHANT });
    h.sandbox.advanceOrder(order.id);
    const ids = await h.ingest(eventsOf(order.id));
    await waitFor(() => settled(h.db, ids), { what: "events settled" });
    const truth = h.sandbox.truth.order(order.id)!;
    const stored = await replicaOrder(order.id);
    expect(stored).toMatchObject({ version: truth.version, status: truth.status });
    expect(stored!.raw).toEqual(JSON.parse(JSON.stringify(truth)));
    const [children] = await h.db.sql`
      select (select count(*)::int from replica.order_items where order_id = ${order.id}) as items,
             (select count(*)::int from replica.order_status_history where order_id = ${order.id}) as history`;
    expect(children).toEqual({ items: truth.items.length, history: truth.status_history.length });
    expect(Object.values(await outcomes(h.db, ids)).every((o) => o === "applied" || o === "stale")).toBe(
      true,
    );
  });

  it("keeps version 3 when the events of versions 1 and 2 arrive after it, without fetching again", async () => {
    const order = h.sandbox.createOrder({ merchantId: MERCHANT });
    h.sandbox.advanceOrder(order.id);
    h.sandbox.advanceOrder(order.id);
    const all = h.sandbox.truth.events().filter((e) => e.data.order_id === order.id);
    const v3 = all.filter((e) => e.data.version === 3).map((e) => e.id);
    await h.ingest((e) => v3.includes(e.id));
    await waitFor(() => settled(h.db, v3), { what: "v3 applied" });
    const fetches = h.calls(ORDER_FETCH);
    const older = await h.ingest(eventsOf(order.id));
    await waitFor(() => settled(h.db, older), { what: "older events settled" });
    expect(Object.values(await outcomes(h.db, older))).toEqual(["stale", "stale"]);
    expect((await replicaOrder(order.id))!.version).toBe(3);
    expect(h.calls(ORDER_FETCH)).toBe(fetches);
  });

  it("applies duplicates once: a redelivered event and a re-run job fetch nothing more", async () => {
    const order = h.sandbox.createOrder({ merchantId: MERCHANT });
    const ids = await h.ingest(eventsOf(order.id));
    await waitFor(() => settled(h.db, ids), { what: "first copy settled" });
    const fetches = h.calls(ORDER_FETCH);
    const events = h.sandbox.truth.events().filter((e) => ids.includes(e.id)) as unknown as EventEnvelope[];
    const again = await h.db.sql.begin((tx) =>
      storeEventsAndEnqueue(tx, events, { source: "catchup", applicationId: APPLICATION_ID }),
    );
    expect(again).toMatchObject({ inserted: [], duplicates: ids, enqueued: [] });
    // A process_events job run a second time (say, after a crash before it was marked done).
    await h.db
      .sql`select graphile_worker.add_job('process_events', json_build_object('eventIds', ${ids}::text[]))`;
    await waitFor(
      async () => {
        const [row] = await h.db
          .sql`select count(*)::int as n from graphile_worker.jobs where task_identifier = 'process_events'`;
        return row!.n === 0;
      },
      { what: "re-run job done" },
    );
    expect(h.calls(ORDER_FETCH)).toBe(fetches);
    expect(Object.values(await outcomes(h.db, ids))).toEqual(["applied"]);
  });

  it("ignores self-originated events: no fetch, no change", async () => {
    const order = h.sandbox.createOrder({ merchantId: MERCHANT });
    const fetches = h.calls(ORDER_FETCH);
    const [created] = h.sandbox.truth
      .events()
      .filter((e) => e.data.order_id === order.id) as unknown as EventEnvelope[];
    const ours = {
      ...created!,
      id: `${created!.id}_self`,
      origin: { type: "api", application_id: APPLICATION_ID },
    };
    // Stored by a source that did not know our application id, so the worker must notice itself.
    const stored = await h.db.sql.begin((tx) =>
      storeEventsAndEnqueue(tx, [ours], { source: "cli", applicationId: undefined }),
    );
    expect(stored.enqueued).toEqual([ours.id]);
    await waitFor(() => settled(h.db, [ours.id]), { what: "self event settled" });
    expect(await outcomes(h.db, [ours.id])).toEqual({ [ours.id]: "ignored_self" });
    expect(await replicaOrder(order.id)).toBeUndefined();
    expect(h.calls(ORDER_FETCH)).toBe(fetches);
  });

  it("coalesces a burst of 20 events for one order into at most 2 fetches", async () => {
    const order = h.sandbox.createOrder({ merchantId: MERCHANT, type: "delivery" });
    for (let i = 0; i < 5; i++) h.sandbox.advanceOrder(order.id);
    for (let i = 0; i < 14; i++) h.sandbox.updateOrder(order.id, { notes: `note ${i}` });
    const burst = h.sandbox.truth.events().filter((e) => e.data.order_id === order.id);
    expect(burst).toHaveLength(20);
    const fetches = h.calls(ORDER_FETCH);
    // One webhook each, newest first, as a reordering network might deliver them.
    const ids: string[] = [];
    for (const e of [...burst].reverse()) ids.push(...(await h.ingest((x) => x.id === e.id)));
    await waitFor(() => settled(h.db, ids), { what: "burst settled" });
    expect(h.calls(ORDER_FETCH) - fetches).toBeLessThanOrEqual(2);
    expect((await replicaOrder(order.id))!.version).toBe(h.sandbox.truth.order(order.id)!.version);
  });

  it("records an order the upstream does not have as failed, without endless retries", async () => {
    const [template] = h.sandbox.truth
      .events()
      .filter((e) => e.type === "order.created") as unknown as EventEnvelope[];
    const ghost = {
      ...template!,
      id: "evt_ghost_1",
      data: { ...template!.data, order_id: "ord_does_not_exist", version: 1 },
    };
    // Counted before the commit: the worker may fetch before this test's next line runs.
    const fetches = h.calls(ORDER_FETCH);
    await h.db.sql.begin((tx) =>
      storeEventsAndEnqueue(tx, [ghost], { source: "webhook", applicationId: APPLICATION_ID }),
    );
    await waitFor(() => settled(h.db, [ghost.id]), { what: "ghost settled" });
    const [row] = await h.db.sql`select outcome, error, outcome_at from sync.events where id = ${ghost.id}`;
    expect(row).toMatchObject({ outcome: "failed" });
    expect(row!.error).toMatch(/404/);
    expect(row!.outcome_at).toBeInstanceOf(Date);
    // Not handed to a retrying job of its own: one call, and the queue is empty.
    const [retrying] = await h.db.sql`
      select count(*)::int as n from graphile_worker.jobs where key = ${`order:${MERCHANT}:ord_does_not_exist`}`;
    expect(retrying!.n).toBe(0);
    const [queued] = await h.db.sql`
      select count(*)::int as n from sync.order_refresh where order_id = 'ord_does_not_exist'`;
    expect(queued!.n).toBe(0);
    expect(h.calls(ORDER_FETCH) - fetches).toBe(1);
  });

  it("reads a merchant's queued orders from one list page, every order applied at its version, a missing one fetched and failed alone", async () => {
    const orders = Array.from({ length: 12 }, () => h.sandbox.createOrder({ merchantId: MERCHANT }));
    const ids = new Set(orders.map((o) => o.id));
    const events = (h.sandbox.truth.events() as unknown as EventEnvelope[]).filter((e) =>
      ids.has(e.data.order_id as string),
    );
    expect(events).toHaveLength(12);
    const ghost = {
      ...events[0]!,
      id: "evt_ghost_in_batch",
      data: { ...events[0]!.data, order_id: "ord_missing_in_batch", version: 1 },
    };
    const fetches = h.calls(ORDER_FETCH);
    const lists = h.calls("GET /orders");
    await h.db.sql.begin((tx) =>
      storeEventsAndEnqueue(tx, [...events, ghost], { source: "webhook", applicationId: APPLICATION_ID }),
    );
    const all = [...events.map((e) => e.id), ghost.id];
    await waitFor(() => settled(h.db, all), { what: "batch settled" });
    const result = await outcomes(h.db, all);
    expect(result[ghost.id]).toBe("failed");
    expect(events.map((e) => result[e.id])).toEqual(events.map(() => "applied"));
    // One page for the twelve; the ghost, absent from it, is asked for alone (and answers 404).
    expect(h.calls("GET /orders") - lists).toBe(1);
    expect(h.calls(ORDER_FETCH) - fetches).toBe(1);
    // How many commits the twelve took depends on when their answers came: each is committed as it
    // arrives, with those that arrived meanwhile (test/worker/order-batches.test.ts).
    const written = await h.db.sql<{ id: string; version: number }[]>`
      select id, version from replica.orders where id = any(${[...ids]}::text[]) order by id`;
    expect(written).toEqual(
      [...ids].sort().map((id) => ({ id, version: h.sandbox.truth.order(id)!.version })),
    );
    const [queue] = await h.db.sql`
      select count(*)::int as n from sync.order_refresh where merchant_id = ${MERCHANT}`;
    expect(queue!.n).toBe(0);
  });

  it("hands an order whose upstream is behind its event to a retrying refresh_order job, applied once upstream catches up", async () => {
    const order = h.sandbox.createOrder({ merchantId: MERCHANT });
    const first = order.version;
    const [created] = (h.sandbox.truth.events() as unknown as EventEnvelope[]).filter(
      (e) => e.data.order_id === order.id,
    );
    // An event that announces the next version before the upstream serves it.
    const ahead = {
      ...created!,
      id: `evt_ahead_${order.id}`,
      type: "order.status_changed",
      data: { ...created!.data, version: first + 1 },
    };
    await storeEventsAndEnqueue(h.db.sql, [ahead], { source: "webhook", applicationId: APPLICATION_ID });
    const key = `order:${MERCHANT}:${order.id}`;
    await waitFor(
      async () => {
        const [job] = await h.db.sql`select count(*)::int as n from graphile_worker.jobs where key = ${key}`;
        return job!.n === 1;
      },
      { what: "handed to refresh_order" },
    );
    expect(await outcomes(h.db, [ahead.id])).toEqual({ [ahead.id]: "pending" });
    expect((await replicaOrder(order.id))!.version).toBe(first);

    h.sandbox.advanceOrder(order.id);
    await h.db.sql`
      select graphile_worker.reschedule_jobs(
        array(select id from graphile_worker.jobs where key = ${key}), run_at => now())`;
    await waitFor(() => settled(h.db, [ahead.id]), { what: "applied once upstream caught up" });
    expect(await outcomes(h.db, [ahead.id])).toEqual({ [ahead.id]: "applied" });
    expect((await replicaOrder(order.id))!.version).toBe(first + 1);
  });

  it("fetches for an order event that names no version, and settles it by when it arrived", async () => {
    const order = h.sandbox.createOrder({ merchantId: MERCHANT });
    const [created] = (h.sandbox.truth.events() as unknown as EventEnvelope[]).filter(
      (e) => e.data.order_id === order.id,
    );
    const { version: _version, ...data } = created!.data;
    const unversioned = { ...created!, id: `evt_unversioned_${order.id}`, data };
    const fetches = h.calls(ORDER_FETCH);
    await storeEventsAndEnqueue(h.db.sql, [unversioned], {
      source: "webhook",
      applicationId: APPLICATION_ID,
    });
    await waitFor(() => settled(h.db, [unversioned.id]), { what: "unversioned event settled" });
    expect(await outcomes(h.db, [unversioned.id])).toEqual({ [unversioned.id]: "applied" });
    expect(h.calls(ORDER_FETCH) - fetches).toBe(1);
    expect((await replicaOrder(order.id))!.version).toBe(h.sandbox.truth.order(order.id)!.version);
  });

  it("records an unknown event type as unhandled, and the job succeeds", async () => {
    const [template] = h.sandbox.truth.events() as unknown as EventEnvelope[];
    const odd = { ...template!, id: "evt_unknown_type", type: "menu.exploded", data: { anything: true } };
    await h.db.sql.begin((tx) =>
      storeEventsAndEnqueue(tx, [odd], { source: "webhook", applicationId: APPLICATION_ID }),
    );
    await waitFor(() => settled(h.db, [odd.id]), { what: "unknown type settled" });
    expect(await outcomes(h.db, [odd.id])).toEqual({ [odd.id]: "unhandled" });
    const [failed] = await h.db
      .sql`select count(*)::int as n from graphile_worker.jobs where last_error is not null`;
    expect(failed!.n).toBe(0);
  });

  it("counts its work in the given prom-client registry", async () => {
    const text = await registry.metrics();
    expect(text).toMatch(/loops_sync_worker_jobs_total\{task="refresh_orders",result="success"\} [1-9]/);
    expect(text).toMatch(/loops_sync_worker_events_total\{outcome="stale"\} [1-9]/);
    expect(text).toMatch(/loops_sync_worker_order_applies_total\{changed="true"\} [1-9]/);
  });
});
