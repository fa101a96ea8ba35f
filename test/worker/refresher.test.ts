import { createWorkerMetrics } from "@loops-sync/worker";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { waitFor } from "#testkit/wait-for";
import { createHarness, type Harness, settled } from "../support/worker-harness.ts";

const MERCHANT = "mer_demo_1";

let h: Harness;
const { registry } = createWorkerMetrics();
beforeAll(async () => {
  h = await createHarness();
  // A poll far beyond the test's waits: only NOTIFYs and finished batches wake the refresher here.
  await h.worker({ registry, orderRefreshPollMs: 600_000 });
});
afterAll(async () => {
  await h?.close();
});

/** Order-refresh batches the worker has run so far (empty ones included). */
async function batchesRun(): Promise<number> {
  const metric = await registry.getSingleMetric("loops_sync_worker_job_duration_seconds")!.get();
  const count = (metric.values as { metricName?: string; labels: { task?: string }; value: number }[]).find(
    (v) => v.metricName?.endsWith("_count") && v.labels.task === "refresh_orders",
  );
  return count?.value ?? 0;
}

describe("worker: order refresher", () => {
  it("takes a merchant's next event at once after one of its batches found nothing to claim", async () => {
    const order = h.sandbox.createOrder({ merchantId: MERCHANT });
    // A queued row the refresher is told of but cannot claim (a row lock of ours): its batch finds nothing,
    // as when a scan lists rows another batch claimed meanwhile.
    await h.db
      .sql`insert into sync.order_refresh (merchant_id, order_id, version) values (${MERCHANT}, ${order.id}, 1)`;
    const lock = await h.db.sql.reserve();
    try {
      await lock`begin`;
      await lock`select id from sync.order_refresh where order_id = ${order.id} for update`;
      const before = await batchesRun();
      await h.db.sql`select pg_notify('loops_sync_order_refresh', '')`;
      await waitFor(async () => (await batchesRun()) > before, { what: "an empty batch" });
      await lock`delete from sync.order_refresh where order_id = ${order.id}`;
      await lock`commit`;
    } finally {
      lock.release();
    }
    // The order's real event: it must not wait for the (10-minute) poll.
    const ids = await h.ingest((e) => e.data.order_id === order.id);
    expect(ids.length).toBeGreaterThan(0);
    await waitFor(() => settled(h.db, ids), { what: "the event settled without a poll" });
    const [row] = await h.db.sql`select version from replica.orders where id = ${order.id}`;
    expect(row!.version).toBe(h.sandbox.truth.order(order.id)!.version);
  });
  it("applies an order while another batch holds a different order of the merchant, and the held one right after", async () => {
    const held = h.sandbox.createOrder({ merchantId: MERCHANT });
    const free = h.sandbox.createOrder({ merchantId: MERCHANT });
    const fetches = () => h.sandbox.stats().apiCalls["GET /orders/{order_id}"] ?? 0;
    // A batch elsewhere is fetching `held`: its order lock, taken by a transaction of ours.
    const lock = await h.db.sql.reserve();
    let heldIds: string[];
    try {
      await lock`begin`;
      await lock`select pg_advisory_xact_lock(hashtextextended(${`order:${MERCHANT}:${held.id}`}, 0))`;
      // Counted before the events are stored: once they are committed a batch may fetch the free order
      // before the ingest's answer reaches this test.
      const before = fetches();
      heldIds = await h.ingest((e) => e.data.order_id === held.id);
      const freeIds = await h.ingest((e) => e.data.order_id === free.id);
      await waitFor(() => settled(h.db, freeIds), { what: "the free order applied while the other is held" });
      // The held order was neither fetched nor settled, and its row is still queued.
      expect(fetches() - before).toBe(1);
      expect(await settled(h.db, heldIds)).toBe(false);
      const [queued] = await h.db.sql`
        select count(*)::int as n from sync.order_refresh where order_id = ${held.id}`;
      expect(queued!.n).toBe(heldIds.length);
      await lock`commit`;
    } finally {
      lock.release();
    }
    // No NOTIFY and no poll (10 minutes here) follow the release: the refresher comes back by itself.
    await waitFor(() => settled(h.db, heldIds), { what: "the held order applied once released" });
    const [row] = await h.db.sql`select version from replica.orders where id = ${held.id}`;
    expect(row!.version).toBe(h.sandbox.truth.order(held.id)!.version);
  });
});
