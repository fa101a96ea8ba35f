import { Writable } from "node:stream";
import { createLogger } from "@loops-sync/config";
import { connect } from "@loops-sync/db";
import type { HttpFetch } from "@loops-sync/loops-client";
import { revokeMerchant } from "@loops-sync/replica";
import {
  createWorkerMetrics,
  type OrderBatchEvents,
  type RunningWorker,
  type StartWorkerOptions,
} from "@loops-sync/worker";
import { createOrderApplier } from "@loops-sync/worker/orders/order-applier";
import { afterEach, describe, expect, it } from "vitest";
import { waitFor } from "#testkit/wait-for";
import { makeOrder } from "../support/make-order.ts";
import { sandboxClient } from "../support/sandbox-client.ts";
import { createHarness, type Harness, outcomes, settled } from "../support/worker-harness.ts";

const MERCHANT = "mer_demo_1";

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

/**
 * A client of the harness's sandbox whose GETs of the orders `holds` picks wait until `release()`; with
 * `answerFirst`, the sandbox answers at once and the answer is what waits.
 */
function clientHolding(
  harness: Harness,
  holds: (orderId: string) => boolean,
  { answerFirst = false }: { answerFirst?: boolean } = {},
) {
  let release!: () => void;
  const gate = new Promise<void>((resolve) => {
    release = resolve;
  });
  let held = 0;
  let mostHeld = 0;
  const fetchThroughGate: HttpFetch = async (url, init) => {
    const orderId = /\/orders\/([^/?]+)$/.exec(new URL(url).pathname)?.[1];
    if (!orderId || !holds(orderId)) return await fetch(url, init as RequestInit);
    const answer = answerFirst ? await fetch(url, init as RequestInit) : undefined;
    mostHeld = Math.max(mostHeld, ++held);
    try {
      await gate;
    } finally {
      held--;
    }
    return answer ?? (await fetch(url, init as RequestInit));
  };
  const client = sandboxClient(harness.sandbox, {
    timeoutMs: 10_000,
    fetch: fetchThroughGate,
  });
  return { client, release, held: () => held, mostHeld: () => mostHeld };
}

async function replicaVersion(harness: Harness, orderId: string): Promise<number | undefined> {
  const [row] = await harness.db.sql<{ version: number }[]>`
    select version from replica.orders where id = ${orderId}`;
  return row?.version;
}

async function eventsOf(harness: Harness, ids: readonly string[], orderId: string): Promise<string[]> {
  const rows = await harness.db.sql<{ id: string }[]>`
    select id from sync.events where id = any(${[...ids]}::text[]) and order_id = ${orderId}`;
  return rows.map((r) => r.id);
}

/** The order batches' events of `worker` from now on, by name, in the order they came. */
function recordBatchEvents(worker: RunningWorker) {
  const seen: { [K in keyof OrderBatchEvents]: OrderBatchEvents[K][0][] } = {
    claimed: [],
    joined: [],
    committed: [],
    ended: [],
  };
  const order: string[] = [];
  for (const name of Object.keys(seen) as (keyof OrderBatchEvents)[]) {
    const record = (event: unknown) => {
      (seen[name] as unknown[]).push(event);
      order.push(name);
    };
    worker.orderBatches.events.on(name, record as (...args: OrderBatchEvents[typeof name]) => void);
  }
  return { ...seen, order };
}

/**
 * Until a session of the test's database waits for a lock (pg_stat_activity): the session `pid`, or any.
 * What the test makes wait is then waiting.
 */
async function waitsForLock(harness: Harness, pid: number | "any", what: string): Promise<void> {
  await waitFor(
    async () => {
      const [row] = await harness.db.sql<{ waiting: boolean }[]>`
        select coalesce(bool_or(wait_event_type = 'Lock'), false) as waiting
        from pg_stat_activity
        where datname = current_database() and (${pid === "any"} or pid = ${pid === "any" ? 0 : pid})`;
      return row!.waiting;
    },
    { what },
  );
}

/**
 * A harness that afterEach closes. Its workers read each order alone (no list page for several orders,
 * status-from-event.test.ts covers that): these tests hold and count single fetches.
 */
async function started(): Promise<Harness> {
  h = await createHarness();
  const worker = h.worker.bind(h);
  h.worker = (options = {}) => worker({ orderListFetchMin: Number.POSITIVE_INFINITY, ...options });
  return h;
}

/**
 * A harness whose worker's fetch of a new order of MERCHANT is held (until `gated.release()`), with that
 * order's events ingested: resolves once the fetch is under way.
 */
async function startedWithHeldOrder(workerOptions: Partial<StartWorkerOptions> = {}) {
  const harness = await started();
  const order = harness.sandbox.createOrder({ merchantId: MERCHANT });
  const gated = clientHolding(harness, (id) => id === order.id);
  // Its batch takes joins for as long as the test holds its fetch, however slow the machine.
  const worker = await harness.worker({
    client: gated.client,
    orderRefreshPollMs: 600_000,
    orderBatchJoinMs: 600_000,
    ...workerOptions,
  });
  const batches = recordBatchEvents(worker);
  const ingesting = performance.now();
  const ids = await harness.ingest((e) => e.data.order_id === order.id);
  await waitFor(() => gated.held() === 1, { what: "the held order's fetch under way" });
  // The order's queued stage (its event stored → its batch took it) lies inside this, however slow the machine.
  const queuedAtMostMs = performance.now() - ingesting;
  return { harness, order, gated, ids, worker, batches, queuedAtMostMs };
}

describe("worker: fetched orders are committed as their answers arrive", () => {
  it("makes an order readable while the slowest answer of its batch is still awaited", async () => {
    const harness = await started();
    const slow = harness.sandbox.createOrder({ merchantId: MERCHANT });
    const fast = harness.sandbox.createOrder({ merchantId: MERCHANT });
    const gated = clientHolding(harness, (id) => id === slow.id);
    await harness.worker({ client: gated.client, orderRefreshPollMs: 600_000 });
    // One inbox transaction and one NOTIFY: a single batch claims both orders.
    const ids = await harness.ingest((e) => e.data.order_id === slow.id || e.data.order_id === fast.id);
    const slowIds = await eventsOf(harness, ids, slow.id);
    const fastIds = await eventsOf(harness, ids, fast.id);
    expect(slowIds.length).toBeGreaterThan(0);
    expect(fastIds.length).toBeGreaterThan(0);
    try {
      await waitFor(
        async () =>
          (await replicaVersion(harness, fast.id)) === harness.sandbox.truth.order(fast.id)!.version &&
          (await settled(harness.db, fastIds)),
        { what: "the fast order readable and its events settled while the slow answer is held" },
      );
      expect(gated.held()).toBe(1);
      expect(await replicaVersion(harness, slow.id)).toBeUndefined();
      expect(await settled(harness.db, slowIds)).toBe(false);
      // The batch's claim is not committed yet: both queue rows are still there for everyone else.
      const [queued] = await harness.db.sql<{ n: number }[]>`
        select count(*)::int as n from sync.order_refresh where order_id in (${slow.id}, ${fast.id})`;
      expect(queued!.n).toBe(ids.length);
    } finally {
      gated.release();
    }
    await waitFor(() => settled(harness.db, slowIds), { what: "the slow order applied once answered" });
    expect(await replicaVersion(harness, slow.id)).toBe(harness.sandbox.truth.order(slow.id)!.version);
    await waitFor(
      async () => {
        const [row] = await harness.db.sql<
          { n: number }[]
        >`select count(*)::int as n from sync.order_refresh`;
        return row!.n === 0;
      },
      { what: "the claim committed" },
    );
  });

  it("reports a batch's steps as events: claimed, joined, committed per order, ended", async () => {
    const {
      harness,
      order: slow,
      gated,
      ids: slowIds,
      batches,
    } = await startedWithHeldOrder({ orderRefreshConcurrency: 1 });
    const late = harness.sandbox.createOrder({ merchantId: MERCHANT });
    const lateIds = await harness.ingest((e) => e.data.order_id === late.id);
    await waitFor(() => batches.committed.some((c) => c.orderId === late.id), {
      what: "the late order committed",
    });
    gated.release();
    await waitFor(() => batches.ended.length > 0, { what: "the batch ended" });
    const batch = batches.claimed[0]!.batch;
    expect(batches.claimed[0]).toMatchObject({ orders: [slow.id], rows: slowIds.length });
    expect(batches.joined.find((j) => j.orders.length > 0)).toMatchObject({
      batch,
      orders: [late.id],
      rows: lateIds.length,
    });
    expect(batches.committed.map((c) => [c.batch.id, c.orderId, c.applied?.changed])).toEqual([
      [batch.id, late.id, true],
      [batch.id, slow.id, true],
    ]);
    expect(batches.ended[0]).toMatchObject({ batch, result: { rows: slowIds.length + lateIds.length } });
    // In that order: the claim first, the join before the commits, the end last.
    expect(batches.order[0]).toBe("claimed");
    expect(batches.order.indexOf("joined")).toBeLessThan(batches.order.indexOf("committed"));
    expect(batches.order.at(-1)).toBe("ended");
  });

  it("measures each order's stages (queued, fetch, commit) and its lag from the stored event to the replica", async () => {
    const metrics = createWorkerMetrics();
    const { harness, order, gated, ids, queuedAtMostMs } = await startedWithHeldOrder({
      registry: metrics.registry,
    });
    const heldMs = 120;
    await new Promise((r) => setTimeout(r, heldMs));
    gated.release();
    await waitFor(() => settled(harness.db, ids), { what: "the held order applied" });
    expect(await replicaVersion(harness, order.id)).toBe(harness.sandbox.truth.order(order.id)!.version);
    const stages = (await metrics.orderRefreshStage.get()).values;
    const of = (stage: string, kind: "sum" | "count") =>
      stages.find((v) => v.labels.stage === stage && v.metricName?.endsWith(`_${kind}`))?.value ?? 0;
    const lag = (await metrics.orderRefreshLag.get()).values;
    const lagOf = (kind: "sum" | "count") => lag.find((v) => v.metricName?.endsWith(`_${kind}`))?.value ?? 0;
    // One order, claimed once, fetched once, committed once.
    expect([of("queued", "count"), of("fetch", "count"), of("commit", "count"), lagOf("count")]).toEqual([
      1, 1, 1, 1,
    ]);
    // The fetch stage holds the time its answer was held, not the queued one (which ended before the hold
    // began; 5 ms for Postgres's clock against ours); the lag is the sum of the three stages.
    expect(of("fetch", "sum")).toBeGreaterThanOrEqual(heldMs / 1000);
    expect(of("queued", "sum")).toBeGreaterThan(0);
    expect(of("queued", "sum")).toBeLessThanOrEqual((queuedAtMostMs + 5) / 1000);
    expect(of("commit", "sum")).toBeGreaterThan(0);
    expect(lagOf("sum")).toBeCloseTo(of("queued", "sum") + of("fetch", "sum") + of("commit", "sum"), 3);
  });

  it("survives its batch's backend dying while the batch fetches (a Postgres restart): the order is applied", async () => {
    const { harness, order, gated, ids } = await startedWithHeldOrder();
    // The batch's transaction is open and idle while its fetch is held.
    const [killed] = await harness.db.sql<{ n: number }[]>`
      select count(pg_terminate_backend(pid))::int as n from pg_stat_activity
      where datname = current_database() and pid <> pg_backend_pid() and state = 'idle in transaction'`;
    expect(killed!.n).toBe(1);
    // The batch writes to its dead connection once its answer is in (postgres.js 3.4.9 unpatched threw a
    // TypeError from a timer here, ending the process); its claim rolled back with the backend, so the rows
    // are claimed again and the order applied.
    gated.release();
    await waitFor(() => settled(harness.db, ids), {
      what: "the order applied after its batch's backend died",
    });
    expect(await replicaVersion(harness, order.id)).toBe(harness.sandbox.truth.order(order.id)!.version);
  });

  it("fetches all of a large batch at once, within the worker's bound on calls in flight", async () => {
    const harness = await started();
    const orders = Array.from({ length: 60 }, () => harness.sandbox.createOrder({ merchantId: MERCHANT }));
    const ours = new Set(orders.map((o) => o.id));
    const gated = clientHolding(harness, (id) => ours.has(id));
    // Three batches at once: 3 × ORDER_FETCH_CONCURRENCY (16) = 48 calls in flight at most.
    const worker = await harness.worker({
      client: gated.client,
      orderRefreshConcurrency: 3,
      orderRefreshPollMs: 600_000,
    });
    // One inbox transaction: one batch claims all sixty.
    const ids = await harness.ingest((e) => ours.has(e.data.order_id as string));
    expect(ids).toHaveLength(60);
    try {
      await waitFor(() => gated.held() === 48, { what: "48 fetches of one batch in flight" });
      // The bound holds: the other twelve wait for a slot.
      await waitFor(() => worker.orderBatches.fetchesWaiting === 12, { what: "twelve fetches waiting" });
      expect(gated.mostHeld()).toBe(48);
    } finally {
      gated.release();
    }
    await waitFor(() => settled(harness.db, ids), { what: "all sixty applied" });
    expect(gated.mostHeld()).toBe(48);
  });

  it("keeps fetching while a commit of fetched orders waits: a call's slot is not held for its commit", async () => {
    const harness = await started();
    const first = harness.sandbox.createOrder({ merchantId: MERCHANT });
    // One batch slot: ORDER_FETCH_CONCURRENCY (16) calls in flight at most.
    const worker = await harness.worker({ orderRefreshConcurrency: 1, orderRefreshPollMs: 200 });
    const batches = recordBatchEvents(worker);
    const firstIds = await harness.ingest((e) => e.data.order_id === first.id);
    await waitFor(() => settled(harness.db, firstIds), { what: "the first order applied" });
    // Its replica row locked elsewhere: the commit of its next version waits (up to APPLY_LOCK_TIMEOUT_MS),
    // and every commit after it in the worker waits too.
    const other = await harness.db.sql.reserve();
    try {
      await other`begin`;
      await other`select id from replica.orders where id = ${first.id} for update`;
      // An order.updated: no payload proves it, so it is fetched (a status change would be applied from its event).
      harness.sandbox.updateOrder(first.id, { notes: "ring twice" });
      const fetchesOf = () => harness.calls("GET /orders/{order_id}");
      const before = fetchesOf();
      const commitsOfFirst = () => batches.committed.filter((c) => c.orderId === first.id).length;
      const committedBefore = commitsOfFirst();
      await harness.ingest((e) => e.data.order_id === first.id);
      await waitFor(() => fetchesOf() > before, { what: "the next version fetched" });
      const more = Array.from({ length: 40 }, () => harness.sandbox.createOrder({ merchantId: MERCHANT }));
      const ours = new Set(more.map((o) => o.id));
      await harness.ingest((e) => ours.has(e.data.order_id as string));
      // All forty are fetched while the commits wait: more than the 16 calls the slots allow at once.
      await waitFor(() => fetchesOf() - before >= 41, { what: "forty more fetched while the commit waits" });
      // The first order's commit was still waiting (it neither committed nor gave up) when they were.
      expect(commitsOfFirst()).toBe(committedBefore);
      await other`rollback`;
    } finally {
      other.release();
    }
  });

  it("hands an event that finds no free batch slot to the merchant's batch still fetching", async () => {
    // One batch slot, taken by the batch that waits for the slow order's answer.
    const { harness, gated, ids: slowIds } = await startedWithHeldOrder({ orderRefreshConcurrency: 1 });
    const late = harness.sandbox.createOrder({ merchantId: MERCHANT });
    const lateIds = await harness.ingest((e) => e.data.order_id === late.id);
    try {
      await waitFor(() => settled(harness.db, lateIds), {
        what: "the late order applied by the running batch",
      });
      expect(await replicaVersion(harness, late.id)).toBe(harness.sandbox.truth.order(late.id)!.version);
      expect(await settled(harness.db, slowIds)).toBe(false);
    } finally {
      gated.release();
    }
    await waitFor(() => settled(harness.db, slowIds), { what: "the slow order applied" });
  });

  it("gives an event for an order its batch is already fetching to a new batch once that one ends", async () => {
    const {
      harness,
      order,
      gated,
      ids: firstIds,
      batches,
    } = await startedWithHeldOrder({ orderRefreshConcurrency: 1 });
    // Its next step while the batch fetches: the batch is told, but must not take it twice.
    harness.sandbox.advanceOrder(order.id);
    const nextIds = await harness.ingest((e) => e.data.order_id === order.id);
    expect(nextIds.length).toBeGreaterThan(0);
    // The join's claim saw those rows and left them: they belong to an order the batch has already.
    const joined = await waitFor(() => batches.joined.find((j) => j.heldHere > 0), {
      what: "a join that left the rows of the order its batch has",
    });
    expect(joined).toMatchObject({ orders: [], rows: 0, heldHere: nextIds.length });
    expect(gated.held()).toBe(1);
    const [queued] = await harness.db.sql<{ n: number }[]>`
      select count(*)::int as n from sync.order_refresh where event_id = any(${nextIds}::text[])`;
    expect(queued!.n).toBe(nextIds.length);
    gated.release();
    // No NOTIFY and no poll (10 minutes) after the batch: the worker comes back for those rows itself.
    await waitFor(() => settled(harness.db, [...firstIds, ...nextIds]), { what: "both events settled" });
    expect(await replicaVersion(harness, order.id)).toBe(harness.sandbox.truth.order(order.id)!.version);
  });

  it("records an order Postgres refuses as failed and goes on with its batch, also for an order that came by a join", async () => {
    const {
      harness,
      order: held,
      gated,
      ids: heldIds,
      batches,
    } = await startedWithHeldOrder({
      orderRefreshConcurrency: 1,
    });
    const refused = harness.sandbox.createOrder({ merchantId: MERCHANT });
    await harness.db.sql.unsafe(`
      create function public.refuse_order() returns trigger language plpgsql as $$
      begin
        if new.id = '${refused.id}' then
          raise exception 'refused by a rule of this database' using errcode = '22023';
        end if;
        return new;
      end $$;
      create trigger refuse_order before insert or update on replica.orders
        for each row execute function public.refuse_order();`);
    // No free slot: the running batch takes it, fetches it, and its commit is refused while the held
    // order's answer is still awaited.
    const refusedIds = await harness.ingest((e) => e.data.order_id === refused.id);
    const commit = await waitFor(() => batches.committed.find((c) => c.orderId === refused.id), {
      what: "the refused order's commit over",
    });
    expect(String(commit.error)).toMatch(/refused by a rule of this database/);
    expect(batches.joined.some((j) => j.orders.includes(refused.id))).toBe(true);
    expect(gated.held()).toBe(1);
    gated.release();
    await waitFor(() => settled(harness.db, heldIds), { what: "the held order applied" });
    await waitFor(() => settled(harness.db, refusedIds), { what: "the refused order settled" });
    expect(Object.values(await outcomes(harness.db, refusedIds))).toEqual(refusedIds.map(() => "failed"));
    expect(await replicaVersion(harness, held.id)).toBe(harness.sandbox.truth.order(held.id)!.version);
    expect(await replicaVersion(harness, refused.id)).toBeUndefined();
  });

  it("lets a revocation that arrives mid-batch wait for the batch, whose answers are committed first", async () => {
    const { harness, order, gated, ids } = await startedWithHeldOrder();
    const revoking = harness.db.sql.begin((tx) => revokeMerchant(tx, MERCHANT));
    // The revocation now waits for the batch's claim (the only lock wait there is); the answer arrives and
    // is committed, then the claim.
    await waitsForLock(harness, "any", "the revocation waiting for the batch");
    gated.release();
    await revoking;
    expect(await replicaVersion(harness, order.id)).toBe(harness.sandbox.truth.order(order.id)!.version);
    expect(Object.values(await outcomes(harness.db, ids))).toEqual(ids.map(() => "applied"));
  });

  it("keeps a merchant that reconnected while its batch's refused fetch was answered: the 403 is stale", async () => {
    const harness = await started();
    const before = (await harness.client.forMerchant(MERCHANT).connection.get()) as { id: string };
    const order = harness.sandbox.createOrder({ merchantId: MERCHANT });
    const gated = clientHolding(harness, (id) => id === order.id, { answerFirst: true });
    const worker = await harness.worker({ client: gated.client, orderRefreshPollMs: 200 });
    const batches = recordBatchEvents(worker);
    await harness.db.sql`
      insert into sync.merchants (id, learned_from, status, connection_id)
      values (${MERCHANT}, 'config', 'active', ${before.id})
      on conflict (id) do update set status = 'active', connection_id = ${before.id}`;
    // Loops answers the batch's fetch 403 connection_not_active; the answer is still on its way.
    harness.sandbox.revokeMerchant(MERCHANT);
    const ids = await harness.ingest((e) => e.data.order_id === order.id);
    let after: { id: string };
    try {
      await waitFor(() => gated.held() === 1, { what: "the refused answer held" });
      // Meanwhile the merchant connected again and that was confirmed (test/worker/revoked-probe.test.ts
      // shows how): its state names the new connection.
      harness.sandbox.reconnectMerchant(MERCHANT);
      after = (await harness.client.forMerchant(MERCHANT).connection.get()) as { id: string };
      expect(after.id).not.toBe(before.id);
      await harness.db.sql`update sync.merchants set connection_id = ${after.id} where id = ${MERCHANT}`;
    } finally {
      gated.release();
    }
    // That batch's end: the poll (every 200 ms) may start another for the merchant meanwhile, which finds the
    // order's row held and ends at once.
    const refused = batches.claimed.find((c) => c.orders.includes(order.id))?.batch;
    expect(refused, "the batch that claimed the order").toBeDefined();
    await waitFor(() => batches.ended.some((e) => e.batch === refused), { what: "the refused batch ended" });
    const [state] = await harness.db.sql`
      select status, connection_id from sync.merchants where id = ${MERCHANT}`;
    expect(state).toEqual({ status: "active", connection_id: after.id });
    // Its old connection's row says revoked (it was refused); the order is fetched again under the new one.
    const [old] = await harness.db.sql`select status from replica.connections where id = ${before.id}`;
    expect(old?.status).toBe("revoked");
    await waitFor(() => settled(harness.db, ids), { what: "the order's events settled" });
    expect(Object.values(await outcomes(harness.db, ids)).every((o) => o === "applied")).toBe(true);
    expect(await replicaVersion(harness, order.id)).toBe(harness.sandbox.truth.order(order.id)!.version);
  });

  it("gives up a commit that waits for a lock held by a transaction waiting for its batch, instead of hanging", async () => {
    const { harness, order, gated, ids } = await startedWithHeldOrder({ orderRefreshPollMs: 200 });
    // Another transaction locks the order's events, then waits for the rows the batch claimed. The batch
    // waits for its answer's commit, which waits for those events: a cycle Postgres cannot see.
    const other = await harness.db.sql.reserve();
    try {
      const [{ pid }] = (await other`select pg_backend_pid() as pid`) as unknown as [{ pid: number }];
      await other`begin`;
      await other`select id from sync.events where id = any(${ids}::text[]) for update`;
      let deleted = false;
      const deleting = other`delete from sync.order_refresh where order_id = ${order.id}`.then(() => {
        deleted = true;
      });
      await waitsForLock(harness, pid, "the other transaction waiting for the batch's rows");
      expect(deleted).toBe(false);
      gated.release();
      // The commit gives up after APPLY_LOCK_TIMEOUT_MS; the batch rolls back and frees the rows.
      await waitFor(() => deleted, { what: "the other transaction no longer blocked", timeoutMs: 8000 });
      await deleting;
      expect(await replicaVersion(harness, order.id)).toBeUndefined();
      await other`rollback`;
    } finally {
      other.release();
    }
    // The batch handed the order to its own refresh_order job, which applies it.
    await waitFor(() => settled(harness.db, ids), { what: "the order applied by its refresh_order job" });
    expect(await replicaVersion(harness, order.id)).toBe(harness.sandbox.truth.order(order.id)!.version);
  });

  it("refuses to start on a pool of one connection, or with as many batches as connections", async () => {
    const harness = await started();
    const one = connect(harness.db.url, { max: 1 });
    try {
      await expect(harness.worker({ sql: one })).rejects.toThrow(
        /pool \(DATABASE_POOL_SIZE, now 1\) of at least 2/,
      );
      await expect(harness.worker({ orderRefreshConcurrency: 4, sql: harness.db.sql })).rejects.toThrow(
        /order batches \(4\) need a pool \(DATABASE_POOL_SIZE, now 4\)/,
      );
    } finally {
      await one.end();
    }
  });

  it("fails only the order the database refuses; the others of its commit are applied", async () => {
    const harness = await started();
    await harness.db.sql.unsafe(`
      create function public.refuse_order() returns trigger language plpgsql as $$
      begin
        if new.id = 'ord_refused' then raise exception 'refused by a rule of this database'; end if;
        return new;
      end $$;
      create trigger refuse_order before insert or update on replica.orders
        for each row execute function public.refuse_order();`);
    const lines: string[] = [];
    const logger = createLogger({
      name: "test",
      level: "warn",
      destination: new Writable({
        write(chunk, _encoding, done) {
          lines.push(String(chunk));
          done();
        },
      }),
    });
    const metrics = createWorkerMetrics();
    const applier = createOrderApplier({ sql: harness.db.sql, metrics, logger });
    // The first order's commit is under way when the next two are handed in: those two share one.
    const first = applier.apply(makeOrder({ id: "ord_first", merchantId: MERCHANT }), []);
    const good = applier.apply(makeOrder({ id: "ord_good", version: 3, merchantId: MERCHANT }), []);
    const refused = applier.apply(makeOrder({ id: "ord_refused", merchantId: MERCHANT }), []);
    await expect(first).resolves.toMatchObject({ id: "ord_first", changed: true, version: 1 });
    await expect(good).resolves.toMatchObject({ id: "ord_good", changed: true, previousVersion: null });
    await expect(refused).rejects.toThrow(/refused by a rule of this database/);
    expect(await replicaVersion(harness, "ord_good")).toBe(3);
    expect(await replicaVersion(harness, "ord_refused")).toBeUndefined();
    expect(lines.some((l) => l.includes("applying a group of orders failed"))).toBe(true);
  });
});
