import type { EventEnvelope } from "@loops-sync/db";
import { createWorkerMetrics } from "@loops-sync/worker";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { waitFor } from "#testkit/wait-for";
import { createHarness, type Harness, outcomes, settled } from "../support/worker-harness.ts";

const ORDER_FETCH = "GET /orders/{order_id}";
const ORDER_LIST = "GET /orders";

let h: Harness;
const { registry } = createWorkerMetrics();
beforeAll(async () => {
  h = await createHarness();
  await h.worker({ registry });
  // Warm up: one order per merchant brings their locations into the replica, so the tests below see
  // only order fetches (an unknown location would add a concurrent GET /locations to the calls they count).
  const warmUp = [
    h.sandbox.createOrder({ merchantId: "mer_demo_1" }),
    h.sandbox.createOrder({ merchantId: "mer_demo_2" }),
  ];
  const ids = await h.ingest((e) => warmUp.some((o) => e.data.order_id === o.id));
  await waitFor(() => settled(h.db, ids), { what: "warm-up orders applied" });
  await waitFor(
    async () => {
      const [row] = await h.db.sql<{ n: number }[]>`select count(*)::int as n from graphile_worker.jobs`;
      return row!.n === 0;
    },
    { what: "no job left from the warm-up" },
  );
  h.sandbox.resetStats();
});
afterEach(() => {
  // A failed test must not leave its faults on for the next one.
  h.sandbox.setFaults({ api429Rate: 0, api5xxRate: 0 });
});
afterAll(async () => {
  await h?.close();
});

const eventsOf = (orderId: string) => (e: EventEnvelope) => e.data.order_id === orderId;
const totalCalls = () => Object.values(h.sandbox.stats().apiCalls).reduce((a, b) => a + b, 0);

/** refresh_order jobs the worker has run so far, whatever their result (a paused one is only moved). */
async function refreshOrderJobsRun(): Promise<number> {
  const metric = await registry.getSingleMetric("loops_sync_worker_jobs_total")!.get();
  return metric.values.filter((v) => v.labels.task === "refresh_order").reduce((sum, v) => sum + v.value, 0);
}

async function refreshJobs(merchantId: string, orderId?: string) {
  return await h.db.sql<
    {
      id: string;
      key: string;
      attempts: number;
      max_attempts: number;
      run_at: Date;
      last_error: string | null;
    }[]
  >`
    select id, key, attempts, max_attempts, run_at, last_error from graphile_worker.jobs
    where task_identifier = 'refresh_order' and key like ${orderId ? `order:${merchantId}:${orderId}` : `order:${merchantId}:%`}`;
}

describe("worker: upstream etiquette", () => {
  it("honours 429: the merchant pauses until Retry-After, its jobs wait without burning attempts", async () => {
    h.sandbox.setFaults({ api429Rate: 1, api429RetryAfterSeconds: 2 });
    const first = h.sandbox.createOrder({ merchantId: "mer_demo_1" });
    const firstIds = await h.ingest(eventsOf(first.id));
    await waitFor(
      async () => {
        const [m] = await h.db.sql`select paused_until from sync.merchants where id = 'mer_demo_1'`;
        return m?.paused_until instanceof Date;
      },
      { what: "merchant paused" },
    );
    const [merchant] = await h.db.sql`select paused_until from sync.merchants where id = 'mer_demo_1'`;
    const callsAtPause = h.calls(ORDER_FETCH);
    expect(callsAtPause, `calls seen by the sandbox: ${JSON.stringify(h.sandbox.stats().apiCalls)}`).toBe(1);
    const listsAtPause = h.calls(ORDER_LIST);
    const jobsAtPause = await refreshOrderJobsRun();
    // Loops answers again at once: a call before the pause's end would now fetch and write its order early,
    // which the checks after the pause see.
    h.sandbox.setFaults({ api429Rate: 0 });
    // A second order of the same merchant during the pause must not reach the upstream either.
    const second = h.sandbox.createOrder({ merchantId: "mer_demo_1" });
    const secondIds = await h.ingest(eventsOf(second.id));
    // Nothing waits in graphile-worker (no attempt burnt): both orders wait in the refresh queue until
    // the pause ends.
    const queued = await h.db.sql<{ order_id: string }[]>`
      select distinct order_id from sync.order_refresh where merchant_id = 'mer_demo_1'`;
    expect(queued.map((r) => r.order_id).sort()).toEqual([first.id, second.id].sort());
    expect(await refreshJobs("mer_demo_1")).toHaveLength(0);

    await waitFor(
      async () => {
        const [m] = await h.db
          .sql`select paused_until > now() as paused from sync.merchants where id = 'mer_demo_1'`;
        return m?.paused === false;
      },
      { what: "the pause over" },
    );
    await waitFor(() => settled(h.db, [...firstIds, ...secondIds]), { what: "both orders applied" });
    // The one refused, then the two orders read once: one each, or one list page for both (two waiting).
    const reads = h.calls(ORDER_FETCH) - callsAtPause + (h.calls(ORDER_LIST) - listsAtPause);
    expect(reads).toBeGreaterThanOrEqual(1);
    expect(reads).toBeLessThanOrEqual(2);
    expect(Object.values(await outcomes(h.db, [...firstIds, ...secondIds]))).toEqual(["applied", "applied"]);
    expect(await refreshOrderJobsRun(), "refresh_order jobs run since the pause").toBe(jobsAtPause);
    // Written only once the pause was over.
    const synced = await h.db.sql<{ synced_at: Date }[]>`
      select synced_at from replica.orders where id in (${first.id}, ${second.id})`;
    for (const row of synced) {
      expect(row.synced_at.getTime()).toBeGreaterThanOrEqual(merchant!.paused_until.getTime() - 5);
    }
  });

  it("backs off on 5xx; a job that exhausts its attempts stays visible, marks the event failed, and can be re-run", async () => {
    h.sandbox.setFaults({ api5xxRate: 1 });
    const order = h.sandbox.createOrder({ merchantId: "mer_demo_1" });
    const ids = await h.ingest(eventsOf(order.id));
    await waitFor(async () => (await refreshJobs("mer_demo_1", order.id))[0]?.last_error != null, {
      what: "first failed attempt",
    });
    const [job] = await refreshJobs("mer_demo_1", order.id);
    expect(job!.attempts).toBe(1);
    expect(job!.run_at.getTime()).toBeGreaterThan(Date.now());
    expect(await outcomes(h.db, ids)).toEqual({ [ids[0]!]: "pending" });
    // Jump to the last attempt instead of waiting out the backoff.
    await h.db.sql`
      select graphile_worker.reschedule_jobs(array[${job!.id}]::bigint[], run_at => now(), attempts => ${job!.max_attempts - 1})`;
    await waitFor(() => settled(h.db, ids), { what: "last attempt failed" });
    const [row] = await h.db.sql`select outcome, error from sync.events where id = ${ids[0]!}`;
    expect(row).toMatchObject({ outcome: "failed" });
    expect(row!.error).toMatch(/gave up after \d+ attempts.*503/);
    const [exhausted] = await refreshJobs("mer_demo_1", order.id);
    expect(exhausted).toMatchObject({ attempts: job!.max_attempts });

    h.sandbox.setFaults({ api5xxRate: 0 });
    await h.db
      .sql`select graphile_worker.reschedule_jobs(array[${job!.id}]::bigint[], run_at => now(), attempts => 0)`;
    await waitFor(async () => (await outcomes(h.db, ids))[ids[0]!] === "applied", { what: "re-run applied" });
    const [stored] = await h.db.sql`select version from replica.orders where id = ${order.id}`;
    expect(stored!.version).toBe(h.sandbox.truth.order(order.id)!.version);
    await waitFor(async () => (await refreshJobs("mer_demo_1", order.id)).length === 0, {
      what: "the re-run job completed",
    });
  });

  it("connection.revoked stops every call for the merchant; its data stays", async () => {
    const before = h.sandbox.createOrder({ merchantId: "mer_demo_2" });
    const beforeIds = await h.ingest(eventsOf(before.id));
    await waitFor(() => settled(h.db, beforeIds), { what: "order applied" });
    h.sandbox.revokeMerchant("mer_demo_2");
    const revocation = await h.ingest(
      (e) => e.type === "connection.revoked" && e.merchant_id === "mer_demo_2",
    );
    await waitFor(() => settled(h.db, revocation), { what: "revocation applied" });
    const [merchant] = await h.db.sql`select status, revoked_at from sync.merchants where id = 'mer_demo_2'`;
    expect(merchant).toMatchObject({ status: "revoked" });
    h.sandbox.resetStats();
    const after = h.sandbox.createOrder({ merchantId: "mer_demo_2" });
    h.sandbox.advanceOrder(after.id);
    const afterIds = await h.ingest(eventsOf(after.id));
    await waitFor(() => settled(h.db, afterIds), { what: "later events settled" });
    expect(Object.values(await outcomes(h.db, afterIds))).toEqual(["skipped_revoked", "skipped_revoked"]);
    expect(totalCalls()).toBe(0);
    const [kept] = await h.db.sql`select count(*)::int as n from replica.orders where id = ${before.id}`;
    expect(kept!.n).toBe(1);
  });

  it("403 connection_not_active revokes the merchant and settles its pending work without more calls", async () => {
    h.sandbox.revokeMerchant("mer_demo_1");
    const order = h.sandbox.createOrder({ merchantId: "mer_demo_1" });
    h.sandbox.resetStats();
    const ids = await h.ingest(eventsOf(order.id));
    await waitFor(() => settled(h.db, ids), { what: "event settled" });
    expect(await outcomes(h.db, ids)).toEqual({ [ids[0]!]: "skipped_revoked" });
    expect(h.calls(ORDER_FETCH)).toBe(1);
    const [merchant] = await h.db.sql`select status from sync.merchants where id = 'mer_demo_1'`;
    expect(merchant).toMatchObject({ status: "revoked" });
    h.sandbox.advanceOrder(order.id);
    const more = await h.ingest(eventsOf(order.id));
    await waitFor(() => settled(h.db, more), { what: "later event settled" });
    expect(h.calls(ORDER_FETCH)).toBe(1);
  });
});
