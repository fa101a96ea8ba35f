// Postgres goes away for 8 s (a TCP proxy between the processes and the server is cut; the server itself
// keeps running for everyone else) while a receiver and a worker are under load and graphile-worker jobs
// complete all the time. Both processes ride it out, and afterwards every order is mirrored and every job
// done. Before the fix, a job ending during the outage ended the worker with an unhandled rejection
// (graphile-worker does not await the query that records a job's end).

import { randomBytes } from "node:crypto";
import { type Sandbox, startSandbox } from "@loops-sync/sandbox";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { compareReplicaWithTruth } from "#testkit/compare-replica";
import { loopsSyncEnv, ProcessGroup, receiverUrlOf, recordSecrets } from "#testkit/processes";
import { waitFor } from "#testkit/wait-for";
import { chaosSeed } from "../support/chaos-seed.ts";
import { createTestDatabase, type TestDatabase } from "../support/db.ts";
import { queueReport } from "../support/queue-report.ts";
import { startTcpProxy, type TcpProxy } from "../support/tcp-proxy.ts";

const RUN_ID = `outage-${randomBytes(4).toString("hex")}`;
const OUTAGE_MS = 8000;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe("a Postgres outage shorter than HEALTH_DATABASE_GRACE_SECONDS", () => {
  const procs = new ProcessGroup();
  const world = chaosSeed({ merchants: 2, label: "outage" });
  let db: TestDatabase;
  let sandbox: Sandbox;
  let proxy: TcpProxy;

  beforeAll(async () => {
    db = await createTestDatabase();
    // Webhooks refused during the outage are retried on the spec's schedule, 120 times faster; catch-up
    // every minute picks up what a retry has not delivered yet.
    sandbox = await startSandbox({ seed: world.seed, timeScale: 120 });
    recordSecrets(RUN_ID, [world.credentials.clientSecret, world.webhookSecret]);
    const target = new URL(db.url);
    proxy = await startTcpProxy({ host: target.hostname, port: Number(target.port || 5432) });
  });
  afterAll(async () => {
    await procs.killAll();
    await proxy?.close();
    await sandbox?.close();
    await db?.drop();
  }, 30_000);

  it("keeps the receiver and the worker running, and mirrors every order afterwards", {
    timeout: 240_000,
  }, async () => {
    const url = new URL(db.url);
    url.hostname = "127.0.0.1";
    url.port = String(proxy.port);
    const env = loopsSyncEnv({
      databaseUrl: url.toString(),
      api: sandbox,
      credentials: world.credentials,
      webhookSecrets: [world.webhookSecret],
      extra: {
        HEALTH_DATABASE_GRACE_SECONDS: "30",
        WORKER_CONCURRENCY: "4",
        CATCHUP_CRON: "* * * * *",
        LOOPS_MERCHANT_IDS: world.merchantIds.join(","),
      },
    });
    const receiver = procs.spawn({ name: `${RUN_ID}-receiver`, args: ["receiver"], env });
    const worker = procs.spawn({ name: `${RUN_ID}-worker`, args: ["worker"], env });
    sandbox.addWebhookEndpoint({
      url: `${await receiverUrlOf(receiver)}/webhooks/loops`,
      secrets: [world.webhookSecret],
    });
    await worker.waitForLine(/"msg":"worker started"/);

    // Jobs completing all the time: cheap process_events jobs (their events are unknown: nothing to do),
    // added straight to the server, not through the proxy.
    let adding = true;
    let added = 0;
    const addJobs = (async () => {
      while (adding) {
        await db.sql`
          select graphile_worker.add_job('process_events', json_build_object('eventIds', array['evt_none_' || n]))
          from generate_series(1, 5) as n`;
        added += 5;
        await sleep(100);
      }
    })();
    sandbox.startGenerator({ ratePerSecond: 10, advanceEveryMs: 300 });
    await sleep(2000);
    // Jobs that are sure to end during the outage: their two Loops calls answer 3 s late each, so a job seen
    // running is still waiting on Loops when Postgres goes away, and ends (graphile-worker records its end, or
    // its failure when a statement meets the cut) within the 8 s outage.
    sandbox.setFaults({ apiSlowRate: 1, apiSlowMs: 3000 });
    await db.sql`
      select graphile_worker.add_job('refresh_merchant', json_build_object('merchantId', m))
      from unnest(${world.merchantIds}::text[]) as m`;
    // One running is enough for what this guards, and needs no luck: waiting for both at the same moment
    // needed two of the four workers free within one slow call of each other, which catch-up and the
    // reconcile at start (slow too now) often prevented on a busy machine.
    await waitFor(
      async () =>
        (
          await db.sql<{ n: number }[]>`
            select count(*)::int as n from graphile_worker.jobs
            where task_identifier = 'refresh_merchant' and locked_at is not null`
        )[0]!.n > 0,
      // Generous: catch-up and the reconcile at start may hold the four workers for a while on a busy machine.
      { timeoutMs: 120_000, what: "a slow job to be running" },
    );
    await proxy.cut();
    sandbox.setFaults({ apiSlowRate: 0 });
    await sleep(OUTAGE_MS);
    await proxy.restore();
    await sleep(2000);
    sandbox.stopGenerator();
    adding = false;
    await addJobs;

    expect([receiver.alive(), worker.alive()]).toEqual([true, true]);
    await waitFor(
      async () => {
        const [left] = await db.sql<{ n: number }[]>`
          select count(*)::int as n from graphile_worker.jobs where task_identifier = 'process_events'`;
        return left!.n === 0;
      },
      { timeoutMs: 60_000, intervalMs: 250, what: "every load job done" },
    ).catch(async (error: Error) => {
      // Which job stays, who locks it, and whether that pool still beats (see queue-report.ts).
      throw new Error(
        `${error.message}: ${await queueReport(db.sql, { tasks: ["process_events"], worker })}`,
      );
    });
    let problems: string[] = [];
    await waitFor(
      async () => {
        problems = await compareReplicaWithTruth(db.sql, sandbox.truth.orders());
        return problems.length === 0;
      },
      { timeoutMs: 90_000, intervalMs: 500, what: "every order mirrored" },
    ).catch(async (error: Error) => {
      // An order behind may wait on a job (refresh_order) that stays locked, or on the order queue.
      const orderQueue = await db.sql`
        select id, order_id, version, event_id, queued_at::text, not_before::text
        from sync.order_refresh order by id limit 10`;
      const pending = await db.sql`
        select id, type, order_id, order_version, received_at::text from sync.events
        where outcome = 'pending' order by received_at limit 10`;
      throw new Error(
        `${error.message}: ${problems.slice(0, 5).join("; ")}; order queue: ${JSON.stringify(orderQueue)}; ` +
          `pending events: ${JSON.stringify(pending)}; queue: ${await queueReport(db.sql, { worker })}`,
      );
    });
    expect(added).toBeGreaterThan(0);
    expect(sandbox.truth.orders().length).toBeGreaterThan(0);
    expect([receiver.alive(), worker.alive()]).toEqual([true, true]);
  });
});
