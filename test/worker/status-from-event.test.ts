import { type EventEnvelope, requestBudget, storeEventsAndEnqueue } from "@loops-sync/db";
import type { RunningWorker, StartWorkerOptions } from "@loops-sync/worker";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { waitFor } from "#testkit/wait-for";
import { APPLICATION_ID, createHarness, type Harness, settled } from "../support/worker-harness.ts";

const ORDER_FETCH = "GET /orders/{order_id}";
const ORDER_LIST = "GET /orders";
const MERCHANT = "mer_demo_1";

let h: Harness;
let worker: RunningWorker;
beforeAll(async () => {
  h = await createHarness();
  worker = await h.worker({});
});

async function restartWorker(options: Partial<StartWorkerOptions>) {
  await worker.stop();
  worker = await h.worker(options);
}
afterAll(async () => {
  await h?.close();
});

const eventsOf = (orderId: string) => (e: EventEnvelope) => e.data.order_id === orderId;

async function stored(id: string) {
  const [row] = await h.db.sql<
    { version: number; fetched_version: number; status: string; unconfirmed: boolean; history: number }[]
  >`
    select version, fetched_version, status, unconfirmed_since is not null as unconfirmed,
           (select count(*)::int from replica.order_status_history where order_id = o.id) as history
    from replica.orders o where id = ${id}`;
  return row;
}

const changesOf = (id: string) =>
  h.db.sql<{ source: string; version: number; previous_status: string | null; status: string }[]>`
    select source, version, previous_status, status from replica.changes
    where resource = 'order' and resource_id = ${id} order by position`;

/** A new order, mirrored by its fetch. */
async function mirroredOrder() {
  const order = h.sandbox.createOrder({ merchantId: MERCHANT });
  const ids = await h.ingest(eventsOf(order.id));
  await waitFor(() => settled(h.db, ids), { what: "the new order fetched and applied" });
  return order;
}

describe("worker: an order.status_changed that chains is applied from its payload", () => {
  it("applies status, version and history with no call, its change in the feed (source event), unconfirmed", async () => {
    const order = await mirroredOrder();
    const fetches = h.calls(ORDER_FETCH);
    h.sandbox.advanceOrder(order.id);
    const ids = await h.ingest(eventsOf(order.id));
    await waitFor(() => settled(h.db, ids), { what: "the status event applied" });
    const truth = h.sandbox.truth.order(order.id)!;
    expect(h.calls(ORDER_FETCH)).toBe(fetches);
    expect(await stored(order.id)).toEqual({
      version: truth.version,
      fetched_version: truth.version - 1,
      status: truth.status,
      unconfirmed: true,
      history: truth.status_history.length,
    });
    expect((await changesOf(order.id)).at(-1)).toEqual({
      source: "event",
      version: truth.version,
      previous_status: "placed",
      status: truth.status,
    });
  });

  it("applies reordered events as soon as the gap fills (v3 before v2), with no call", async () => {
    // A wait no machine outlasts between the two ingests: v3 must wait for v2, not be fetched.
    await restartWorker({ orderReorderWaitMs: 120_000 });
    const order = await mirroredOrder();
    const fetches = h.calls(ORDER_FETCH);
    h.sandbox.advanceOrder(order.id);
    h.sandbox.advanceOrder(order.id);
    const all = h.sandbox.truth.events().filter((e) => e.data.order_id === order.id);
    const v3 = all.filter((e) => e.data.version === 3).map((e) => e.id);
    const first = await h.ingest((e) => v3.includes(e.id));
    const rest = await h.ingest(eventsOf(order.id));
    await waitFor(() => settled(h.db, [...first, ...rest]), { what: "both applied" });
    const truth = h.sandbox.truth.order(order.id)!;
    expect(await stored(order.id)).toMatchObject({ version: 3, status: truth.status, history: 3 });
    expect(h.calls(ORDER_FETCH)).toBe(fetches);
  });

  it("settles an event the replica covers that is claimed beside one waiting for a gap", async () => {
    await restartWorker({ orderReorderWaitMs: 120_000 });
    const order = await mirroredOrder();
    for (let n = 0; n < 3; n++) h.sandbox.advanceOrder(order.id);
    const ofVersion = (version: number) =>
      h.sandbox.truth.events().filter((e) => e.data.order_id === order.id && e.data.version === version);
    const v2 = await h.ingest((e) => ofVersion(2).some((x) => x.id === e.id));
    await waitFor(() => settled(h.db, v2), { what: "v2 applied from its payload" });
    // v4 waits for v3 in the queue.
    await h.ingest((e) => ofVersion(4).some((x) => x.id === e.id));
    await waitFor(
      async () =>
        (
          await h.db.sql`
            select 1 from sync.order_refresh where order_id = ${order.id} and not_before > now()`
        ).length > 0,
      { what: "v4 held for the gap" },
    );
    // v2 again under another id (as a catch-up and a webhook may both bring it): its claim takes v4's
    // waiting row along, and nothing chains. The replica covers it: it must be settled, not dropped.
    const again = { ...(ofVersion(2)[0] as unknown as EventEnvelope), id: `evt_again_${order.id}` };
    await h.db.sql.begin((tx) =>
      storeEventsAndEnqueue(tx, [again], { source: "webhook", applicationId: APPLICATION_ID }),
    );
    await waitFor(() => settled(h.db, [again.id]), { what: "the repeated v2 settled", timeoutMs: 10_000 });
    const [outcome] = await h.db.sql`select outcome from sync.events where id = ${again.id}`;
    expect(outcome!.outcome).toBe("stale");
    // And v4 still waits for v3, which chains both.
    const fetches = h.calls(ORDER_FETCH);
    const rest = await h.ingest(eventsOf(order.id));
    await waitFor(() => settled(h.db, rest), { what: "v3 and v4 applied" });
    expect(await stored(order.id)).toMatchObject({ version: 4 });
    expect(h.calls(ORDER_FETCH)).toBe(fetches);
  });

  it("fetches an order whose version gap does not fill within the wait", async () => {
    await restartWorker({ orderReorderWaitMs: 300 });
    const order = await mirroredOrder();
    h.sandbox.advanceOrder(order.id);
    h.sandbox.advanceOrder(order.id);
    const v3 = h.sandbox.truth
      .events()
      .filter((e) => e.data.order_id === order.id && e.data.version === 3)
      .map((e) => e.id);
    const fetches = h.calls(ORDER_FETCH);
    const ids = await h.ingest((e) => v3.includes(e.id));
    await waitFor(() => settled(h.db, ids), { what: "v3 covered by a fetch" });
    expect(h.calls(ORDER_FETCH)).toBe(fetches + 1);
    expect(await stored(order.id)).toMatchObject({ version: 3, unconfirmed: false });
    await restartWorker({});
  });

  it("confirms an unconfirmed row with a list page, with no feed change when nothing a reader sees differs", async () => {
    const order = await mirroredOrder();
    h.sandbox.advanceOrder(order.id);
    const ids = await h.ingest(eventsOf(order.id));
    await waitFor(() => settled(h.db, ids), { what: "the status event applied" });
    const lists = h.calls(ORDER_LIST);
    // The merchant goes quiet (CONFIRM_QUIET_SECONDS): the confirmer reads its orders' list page.
    await waitFor(async () => (await stored(order.id))?.unconfirmed === false, {
      what: "the row confirmed",
      timeoutMs: 60_000,
    });
    expect(h.calls(ORDER_LIST)).toBeGreaterThan(lists);
    const truth = h.sandbox.truth.order(order.id)!;
    const [row] = await h.db
      .sql`select raw, fetched_version, version from replica.orders where id = ${order.id}`;
    expect(row!.raw).toEqual(JSON.parse(JSON.stringify(truth)));
    expect(row!.fetched_version).toBe(row!.version);
    expect((await changesOf(order.id)).map((c) => c.source)).not.toContain("confirm");
  });
});

describe("worker: a confirmation that finds a difference", () => {
  it("rewrites the row from upstream and records the change with source confirm", async () => {
    const order = await mirroredOrder();
    h.sandbox.advanceOrder(order.id);
    const ids = await h.ingest(eventsOf(order.id));
    await waitFor(() => settled(h.db, ids), { what: "the status event applied" });
    // What the payload could not say, as if upstream had changed it with the status (payment on delivery).
    await h.db.sql`
      update replica.orders set raw = jsonb_set(raw, '{notes}', '"not what upstream holds"')
      where id = ${order.id} and unconfirmed_since is not null`;
    await waitFor(async () => (await stored(order.id))?.unconfirmed === false, {
      what: "the row confirmed",
      timeoutMs: 60_000,
    });
    const [row] = await h.db.sql`select raw, last_change_source from replica.orders where id = ${order.id}`;
    expect(row!.raw).toEqual(JSON.parse(JSON.stringify(h.sandbox.truth.order(order.id))));
    expect(row!.last_change_source).toBe("confirm");
    expect((await changesOf(order.id)).at(-1)).toMatchObject({ source: "confirm", status: "accepted" });
  });
});

/** Two new orders of one merchant, stored in one inbox transaction (one NOTIFY: one batch claims both). */
async function twoNewOrders() {
  const orders = [
    h.sandbox.createOrder({ merchantId: MERCHANT }),
    h.sandbox.createOrder({ merchantId: MERCHANT }),
  ];
  const ours = new Set(orders.map((o) => o.id));
  const ids = await h.ingest((e) => ours.has(e.data.order_id as string));
  await waitFor(() => settled(h.db, ids), { what: "both orders applied" });
  return orders;
}

describe("worker: several orders to fetch are read from one list page", () => {
  it("reads two new orders of a merchant with one GET /orders?updated_since= and no single reads", async () => {
    const fetches = h.calls(ORDER_FETCH);
    const lists = h.calls(ORDER_LIST);
    const orders = await twoNewOrders();
    expect(h.calls(ORDER_FETCH)).toBe(fetches);
    expect(h.calls(ORDER_LIST)).toBe(lists + 1);
    for (const order of orders) {
      const [row] = await h.db.sql`select raw from replica.orders where id = ${order.id}`;
      expect(row!.raw).toEqual(JSON.parse(JSON.stringify(h.sandbox.truth.order(order.id))));
    }
  });
});

describe("worker: list pages only while the request budget is busy (maxRps given, as the CLI does)", () => {
  it("reads each order alone while the budget is free, and one list page while it is busy", async () => {
    await restartWorker({ maxRps: 20 });
    try {
      let fetches = h.calls(ORDER_FETCH);
      let lists = h.calls(ORDER_LIST);
      await twoNewOrders();
      // Free: two single reads are one round trip, a list page would be two for any order it misses.
      expect(h.calls(ORDER_FETCH) - fetches).toBe(2);
      expect(h.calls(ORDER_LIST)).toBe(lists);

      // Other calls of the deployment use 60 % of the 20/s: the worker reads the next two from one page.
      const budget = requestBudget(h.db.sql, { maxRps: 20 });
      let filling = true;
      const filler = (async () => {
        while (filling) {
          await budget.take(1, true);
          await new Promise((resolve) => setTimeout(resolve, 100));
        }
      })();
      try {
        await waitFor(
          async () =>
            (
              await h.db
                .sql`select 1 from sync.request_budget where (select sum(u) from unnest(used) u) >= 10`
            ).length > 0,
          { what: "the budget's last second at half of 20" },
        );
        // The worker reads the budget once a second.
        await waitFor(() => worker.orderBatches.bulkReads, { what: "the worker reading the budget busy" });
        fetches = h.calls(ORDER_FETCH);
        lists = h.calls(ORDER_LIST);
        await twoNewOrders();
        expect(h.calls(ORDER_FETCH)).toBe(fetches);
        expect(h.calls(ORDER_LIST) - lists).toBe(1);
      } finally {
        filling = false;
        await filler;
      }

      // The way back: once less than a fifth of the budget is used, each order is read alone again.
      await waitFor(() => !worker.orderBatches.bulkReads, {
        what: "the worker reading the budget free again",
      });
      fetches = h.calls(ORDER_FETCH);
      lists = h.calls(ORDER_LIST);
      await twoNewOrders();
      expect(h.calls(ORDER_FETCH) - fetches).toBe(2);
      expect(h.calls(ORDER_LIST)).toBe(lists);
    } finally {
      await restartWorker({});
    }
  });
});

describe("worker: a payload that does not chain", () => {
  // Last in the file: the forged version never comes upstream, so its order's refresh_order job keeps
  // fetching it with backoff, which the other tests' call counts must not see.
  it("never applies a payload that does not chain: the order is fetched instead", async () => {
    const order = await mirroredOrder();
    const fetches = h.calls(ORDER_FETCH);
    // Version one above the stored one, but from a status the order never had: not proven, so not applied.
    const forged: EventEnvelope = {
      id: `evt_forged_${order.id}`,
      type: "order.status_changed",
      created_at: new Date().toISOString(),
      merchant_id: MERCHANT,
      location_id: order.location_id,
      connection_id: "con_demo_1",
      origin: { type: "channel", application_id: null },
      data: {
        order_id: order.id,
        channel_ref: order.channel_ref,
        previous_status: "ready",
        status: "cancelled",
        version: 2,
      },
    };
    await h.db.sql.begin((tx) =>
      storeEventsAndEnqueue(tx, [forged], { source: "webhook", applicationId: APPLICATION_ID }),
    );
    await waitFor(() => h.calls(ORDER_FETCH) > fetches, { what: "the order fetched instead" });
    await waitFor(
      async () => {
        const [row] = await h.db
          .sql`select count(*)::int as n from sync.order_refresh where order_id = ${order.id}`;
        return row?.n === 0;
      },
      { what: "its queue row answered" },
    );
    expect(await stored(order.id)).toMatchObject({ version: 1, status: "placed", unconfirmed: false });
    expect((await changesOf(order.id)).map((c) => c.source)).not.toContain("event");
  });
});
