import { type ChildProcess, spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import type { EventEnvelope } from "@loops-sync/db";
import { orderLane, ordersJobKey } from "@loops-sync/worker";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createHarness, type Harness, outcomes, settled, waitFor } from "./support/harness.ts";

const FIXTURE = fileURLToPath(new URL("./fixtures/run-worker.ts", import.meta.url));
const ORDER_FETCH = "GET /orders/{order_id}";

let h: Harness;
const children: ChildProcess[] = [];
beforeAll(async () => {
  h = await createHarness();
});
afterAll(async () => {
  for (const child of children)
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
  await h?.close();
});

const eventsOf = (orderId: string) => (e: EventEnvelope) => e.data.order_id === orderId;

async function spawnWorker(): Promise<ChildProcess> {
  const child = spawn(process.execPath, [FIXTURE], {
    env: {
      ...process.env,
      DATABASE_URL: h.db.url,
      LOOPS_API_URL: h.sandbox.apiUrl,
      LOOPS_AUTH_URL: h.sandbox.authUrl,
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  children.push(child);
  let stderr = "";
  child.stderr!.on("data", (chunk) => {
    stderr += chunk;
  });
  await new Promise<void>((resolve, reject) => {
    child.stdout!.on("data", (chunk) => String(chunk).includes("ready") && resolve());
    child.once("exit", (code) => reject(new Error(`worker child exited early (${code}): ${stderr}`)));
  });
  return child;
}

/** The batch refresh job of the order's lane (refresh_orders, keyed `orders:<merchant>:<lane>`). */
async function lockedRefresh(merchantId: string, orderId: string) {
  const [job] = await h.db.sql<{ locked_by: string | null; attempts: number }[]>`
    select locked_by, attempts from graphile_worker.jobs
    where task_identifier = 'refresh_orders' and key = ${ordersJobKey(merchantId, orderLane(orderId))}`;
  return job;
}

describe("worker: crashes and shutdown", () => {
  it("converges after kill -9 mid-job: a survivor releases the dead worker's job and applies the order", async () => {
    h.sandbox.setFaults({ apiSlowRate: 1, apiSlowMs: 4000 });
    const child = await spawnWorker();
    const order = h.sandbox.createOrder({ merchantId: "mer_demo_1" });
    h.sandbox.advanceOrder(order.id);
    const ids = await h.ingest(eventsOf(order.id));
    await waitFor("the child to be mid-fetch", async () => {
      const job = await lockedRefresh("mer_demo_1", order.id);
      return job?.locked_by != null && h.calls(ORDER_FETCH) >= 1;
    });
    const deadPool = (await lockedRefresh("mer_demo_1", order.id))!.locked_by;
    child.kill("SIGKILL");
    await new Promise((resolve) => child.once("exit", resolve));
    expect(await outcomes(h.db, ids)).toEqual(Object.fromEntries(ids.map((id) => [id, "pending"])));
    // The dead worker's claim on the order's queue rows rolled back with its connection.
    await waitFor("the claim rolled back", async () => {
      const [row] = await h.db.sql<{ n: number }[]>`
        select count(*)::int as n from sync.order_refresh where order_id = ${order.id}`;
      return row!.n > 0;
    });

    h.sandbox.setFaults({ apiSlowRate: 0 });
    await h.worker({ deadWorkerAfterMs: 1000 });
    await waitFor("order applied by the survivor", () => settled(h.db, ids), 15_000);
    const [stored] = await h.db.sql`select version from replica.orders where id = ${order.id}`;
    expect(stored!.version).toBe(h.sandbox.truth.order(order.id)!.version);
    const [stillLocked] = await h.db.sql`
      select count(*)::int as n from graphile_worker.jobs where locked_by = ${deadPool}`;
    expect(stillLocked!.n).toBe(0);
  });

  it("stops gracefully: a job stuck on a slow call is released, not failed, and a later worker finishes it", async () => {
    await Promise.all(h.workers.map((w) => w.stop()));
    h.sandbox.setFaults({ apiSlowRate: 1, apiSlowMs: 4000 });
    const worker = await h.worker({ shutdownAbortAfterMs: 200 });
    const order = h.sandbox.createOrder({ merchantId: "mer_demo_1" });
    const ids = await h.ingest(eventsOf(order.id));
    await waitFor(
      "a worker to be mid-fetch",
      async () => (await lockedRefresh("mer_demo_1", order.id))?.locked_by != null,
    );
    await worker.stop();
    const job = await lockedRefresh("mer_demo_1", order.id);
    expect(job).toMatchObject({ locked_by: null, attempts: 0 });
    expect(await outcomes(h.db, ids)).toEqual({ [ids[0]!]: "pending" });

    h.sandbox.setFaults({ apiSlowRate: 0 });
    await h.worker();
    await waitFor("order applied after restart", () => settled(h.db, ids));
    expect(await outcomes(h.db, ids)).toEqual({ [ids[0]!]: "applied" });
  });
});
