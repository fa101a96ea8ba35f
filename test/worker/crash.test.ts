import { type ChildProcess, spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import type { EventEnvelope } from "@loops-sync/db";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { waitFor } from "#testkit/wait-for";
import { createHarness, type Harness, outcomes, settled } from "../support/worker-harness.ts";

const FIXTURE = fileURLToPath(new URL("../support/run-worker.ts", import.meta.url));
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

/** Queue rows of the order that no batch holds (a claim in flight locks them; a rolled-back one frees them). */
async function freeQueueRows(orderId: string) {
  const rows = await h.db.sql`
    select id from sync.order_refresh where order_id = ${orderId} for update skip locked`;
  return rows.length;
}

describe("worker: crashes and shutdown", () => {
  it("converges after kill -9 mid-job: a survivor releases the dead worker's job and applies the order", async () => {
    h.sandbox.setFaults({ apiSlowRate: 1, apiSlowMs: 4000 });
    const child = await spawnWorker();
    const order = h.sandbox.createOrder({ merchantId: "mer_demo_1" });
    h.sandbox.advanceOrder(order.id);
    const ids = await h.ingest(eventsOf(order.id));
    await waitFor(() => h.calls(ORDER_FETCH) >= 1, { what: "the child to be mid-fetch" });
    expect(await freeQueueRows(order.id)).toBe(0);
    child.kill("SIGKILL");
    await new Promise((resolve) => child.once("exit", resolve));
    expect(await outcomes(h.db, ids)).toEqual(Object.fromEntries(ids.map((id) => [id, "pending"])));
    // The dead worker's claim on the order's queue rows rolled back with its connection.
    await waitFor(async () => (await freeQueueRows(order.id)) > 0, { what: "the claim rolled back" });

    h.sandbox.setFaults({ apiSlowRate: 0 });
    await h.worker({ deadWorkerAfterMs: 1000 });
    await waitFor(() => settled(h.db, ids), { what: "order applied by the survivor", timeoutMs: 15_000 });
    const [stored] = await h.db.sql`select version from replica.orders where id = ${order.id}`;
    expect(stored!.version).toBe(h.sandbox.truth.order(order.id)!.version);
    // The events settle in the applier's commit; the batch's own commit, a moment later, deletes its rows.
    await waitFor(async () => (await h.db.sql`select 1 from sync.order_refresh limit 1`).length === 0, {
      what: "the survivor's batch to delete the order's queue rows",
    });
  });

  it("stops gracefully: a job stuck on a slow call is released, not failed, and a later worker finishes it", async () => {
    await Promise.all(h.workers.map((w) => w.stop()));
    h.sandbox.setFaults({ apiSlowRate: 1, apiSlowMs: 4000 });
    const worker = await h.worker({ shutdownAbortAfterMs: 200 });
    const order = h.sandbox.createOrder({ merchantId: "mer_demo_1" });
    const fetchesBefore = h.calls(ORDER_FETCH);
    const ids = await h.ingest(eventsOf(order.id));
    await waitFor(async () => h.calls(ORDER_FETCH) > fetchesBefore && (await freeQueueRows(order.id)) === 0, {
      what: "a worker to be mid-fetch",
    });
    await worker.stop();
    // Released, not failed: the claim rolled back and nothing is recorded against the order.
    expect(await freeQueueRows(order.id)).toBeGreaterThan(0);
    const [failed] = await h.db.sql`
      select count(*)::int as n from graphile_worker.jobs where last_error is not null`;
    expect(failed!.n).toBe(0);
    expect(await outcomes(h.db, ids)).toEqual({ [ids[0]!]: "pending" });

    h.sandbox.setFaults({ apiSlowRate: 0 });
    await h.worker();
    await waitFor(() => settled(h.db, ids), { what: "order applied after restart" });
    expect(await outcomes(h.db, ids)).toEqual({ [ids[0]!]: "applied" });
  });
});
