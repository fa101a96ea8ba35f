// A Postgres restart or failover ends every backend, also those of order batches that hold their
// transaction open while they fetch. The `loops-sync worker` process must live through that and apply the
// orders once Postgres answers again (postgres.js 3.4.9 unpatched threw from a timer here, ending the
// process; docs/decisions.md, "postgres.js patched for connections whose backend dies").

import { randomBytes } from "node:crypto";
import { type EventEnvelope, storeEventsAndEnqueue } from "@loops-sync/db";
import { describe, expect, it } from "vitest";
import { adminUrlOf } from "#testkit/processes";
import { waitFor } from "#testkit/wait-for";
import { sampleValue, scrape } from "../support/scrape.ts";
import { workerWorld } from "../support/worker-world.ts";

const RUN_ID = `backend-killed-${randomBytes(4).toString("hex")}`;
/** Every API answer takes this long, so the batches' transactions are open while the backends die. */
const API_MS = 1500;

describe("a worker whose order batches' backends die while they fetch", () => {
  const w = workerWorld(RUN_ID, "killed");

  it("lives on and applies the orders", { timeout: 90_000 }, async () => {
    const { db, sandbox, world } = w;
    const worker = w.procs.spawn({
      name: `${RUN_ID}-worker`,
      args: ["worker"],
      env: w.env({ CATCHUP_CRON: "0 0 1 1 *" }),
    });
    const admin = await adminUrlOf(worker, 60_000);
    await worker.waitForLine(/"msg":"worker started"/, 60_000);
    await worker.waitForLine(/"msg":"catch-up run finished"/, 60_000);

    sandbox.setFaults({ apiSlowRate: 1, apiSlowMs: API_MS });
    const orders = sandbox.merchantIds.flatMap((merchantId) =>
      [1, 2, 3].map(() => sandbox.createOrder({ merchantId })),
    );
    const ids = new Set(orders.map((o) => o.id));
    const events = (sandbox.truth.events() as unknown as EventEnvelope[]).filter((e) =>
      ids.has(String(e.data.order_id)),
    );
    await db.sql.begin((tx) =>
      storeEventsAndEnqueue(tx, events, {
        source: "webhook",
        applicationId: world.credentials.applicationId,
      }),
    );

    // The batches have claimed the orders and wait for their answers: end their backends.
    const killed = await waitFor(
      async () => {
        const rows = await db.sql<{ pid: number }[]>`
          select pg_terminate_backend(pid)::int as pid from pg_stat_activity
          where datname = current_database() and pid <> pg_backend_pid() and state = 'idle in transaction'`;
        return rows.length > 0 ? rows.length : undefined;
      },
      { what: "an order batch waiting for its answers" },
    );
    expect(killed).toBeGreaterThan(0);
    sandbox.setFaults({ apiSlowRate: 0 });

    await waitFor(
      async () => {
        const [row] = await db.sql<{ n: number }[]>`
          select count(*)::int as n from sync.events
          where id = any(${events.map((e) => e.id)}::text[]) and outcome = 'pending'`;
        return row!.n === 0;
      },
      { timeoutMs: 45_000, what: "every event of the orders settled" },
    );
    for (const order of orders) {
      const [row] = await db.sql<
        { version: number }[]
      >`select version from replica.orders where id = ${order.id}`;
      expect(row?.version, order.id).toBe(sandbox.truth.order(order.id)!.version);
    }
    // The killed batches' own fetches answer only now (their transactions failed at once, but their work
    // goes on): each answer is committed by the worker's applier, and then its batch sends its next statement
    // to its dead connection, which is what ended the process. Once the worker has applied as many orders as
    // the sandbox was asked for, every killed batch has sent that statement.
    const applies = async () => {
      const samples = await scrape(`${admin}/metrics`);
      return ["true", "false"]
        .map((changed) => sampleValue(samples, "loops_sync_worker_order_applies_total", { changed }) ?? 0)
        .reduce((a, b) => a + b, 0);
    };
    const fetched = () => sandbox.stats().apiCalls["GET /orders/{order_id}"] ?? 0;
    // One apply per fetch: with the budget free (LOOPS_MAX_RPS 1000), a batch reads its orders one by one.
    await waitFor(async () => !worker.alive() || (await applies()) === fetched(), {
      timeoutMs: 30_000,
      what: "every fetched order applied, the killed batches' late answers too",
    });
    // Asked after that: a process that died of the statement answers no more.
    const answers = await applies().then(
      () => true,
      () => false,
    );
    expect(answers && worker.alive(), "the worker process after its backends died").toBe(true);
  });
});
