import { monitorEventLoopDelay } from "node:perf_hooks";
import type { Sql } from "@loops-sync/db";
import { LoopsClient } from "@loops-sync/loops-client";
import { type Sandbox, startSandbox } from "@loops-sync/sandbox";
import { readMemory } from "./cli-process.ts";
import { type StageTimes, startJobTrace } from "./job-trace.ts";
import { percentile } from "./percentile.ts";
import { type SentEvent, sendOrderTraffic } from "./send-order-traffic.ts";
import {
  type RunningService,
  serviceEnv,
  startReceiverProcess,
  startWorkerProcess,
} from "./service-processes.ts";
import { VersionWaits } from "./version-waits.ts";
import { watchFeedVersions } from "./watch-feed-versions.ts";
import { watchReplicaVersions } from "./watch-replica-versions.ts";
import { createWebhookSigner } from "./webhook-signer.ts";
import { readWorkerStages, type StageFigure, stagesBetween } from "./worker-stages.ts";

export interface FreshnessFigures {
  rate: number;
  seconds: number;
  apiDelayMs: number;
  acked: number;
  failed: number;
  /** ms from the receiver's 2xx to the commit that made the event's version (or a newer one) readable. */
  p50: number;
  p99: number;
  max: number;
  /** Events whose version had not reached the replica when the bench stopped waiting. */
  unseen: number;
  /**
   * ms from the receiver's 2xx to a backend's feed reader (LISTEN loops_sync_changes, then
   * replica.read_changes after its last position) holding the change of that version (or a newer one).
   */
  readerP50: number;
  readerP99: number;
  readerMax: number;
  /** Events whose change the reader did not hold when the bench stopped waiting. */
  readerUnseen: number;
  /** Changes the reader read in the whole run, and the rows of replica.changes at the end (equal: no gap). */
  readerChanges: number;
  feedRows: number;
  /** ms from sending the webhook to its 2xx at this rate. */
  ackP50: number;
  ackP99: number;
  /** GET /orders/{id} calls per acknowledged event (coalescing shows as below 1). */
  fetchesPerEvent: number;
  /** Postgres transactions committed in this database per acknowledged event (receiver, worker, queue). */
  commitsPerEvent: number;
  /** The floor: one GET /orders/{id} from the bench itself, ms. */
  directFetchP50: number;
  directFetchP99: number;
  receiverPeakRss: number | undefined;
  workerPeakRss: number | undefined;
  workerConcurrency: number;
  /** With `trace`: where the worker's jobs spent their time. */
  stages: StageTimes[] | undefined;
  /** Where the worker's order refreshes spent the measured window (its own metrics). */
  refreshStages: StageFigure[];
}

export interface FreshnessOptions {
  sql: Sql;
  databaseUrl: string;
  /** Default: 1000 events/s. */
  rate?: number;
  seconds: number;
  /** Default: 20 ms for every API answer. */
  apiDelayMs?: number;
  /** WORKER_CONCURRENCY of the worker process. */
  workerConcurrency: number;
  /** How long to wait after the traffic for the last versions. Default: 15 000 ms. */
  drainMs?: number;
  /** Log every job's creation, lock and completion (adds triggers: slower). Default: false. */
  trace?: boolean;
  /** More environment for the receiver and worker processes (the tracing phase's OTEL_*). Default: none. */
  env?: Record<string, string>;
}

/**
 * Freshness at a fixed event rate: the CLI receiver and worker as their own processes, the sandbox
 * answering every API call after `apiDelayMs`, and each event timed from its 2xx to the replica commit.
 */
export async function measureFreshness({
  sql,
  databaseUrl,
  rate = 1000,
  seconds,
  apiDelayMs = 20,
  workerConcurrency,
  drainMs = 15_000,
  trace = false,
  env: extraEnv = {},
}: FreshnessOptions): Promise<FreshnessFigures> {
  const sandbox = await startSandbox({ port: 0, faults: { apiSlowRate: 1, apiSlowMs: apiDelayMs } });
  const signer = createWebhookSigner();
  const env = { ...serviceEnv({ databaseUrl, sandbox }), ...extraEnv };
  // A child that fails to start must not leave the sandbox or the other child running (the bench would
  // never exit).
  let receiver: RunningService | undefined;
  let worker: RunningService;
  try {
    receiver = await startReceiverProcess(env, signer.secret);
    worker = await startWorkerProcess(env, {
      concurrency: workerConcurrency,
      poolSize: Number(process.env.BENCH_POOL_SIZE ?? 10),
    });
  } catch (error) {
    await receiver?.process.stop();
    await sandbox.close();
    throw error;
  }

  const replica = new VersionWaits();
  const reader = new VersionWaits();
  const acks: number[] = [];
  let measuring = false;
  const watch = await watchReplicaVersions(sql, (orderId, version, at) =>
    replica.onVersion(orderId, version, at),
  );
  const feed = await watchFeedVersions(sql, (orderId, version, at) => reader.onVersion(orderId, version, at));
  const onAck = (e: SentEvent) => {
    if (!measuring) return;
    acks.push(e.ackAt - e.sentAt);
    replica.onAck(e);
    reader.onAck(e);
  };

  try {
    const traffic = { sandbox, signer, receiverUrl: receiver.url!, rate, onAck };
    // Warm-up: token, locations, JIT and pools; not counted.
    await sendOrderTraffic({ ...traffic, seconds: 1 });
    // The measured window starts with an idle worker, not with the warm-up's backlog (bounded wait), nor
    // with the catch-up every worker runs as it starts (its burst of API calls made the first seconds of
    // every run the slowest).
    await worker.process.waitForLine((l) => l.msg === "catch-up run finished", 30_000);
    await waitForIdleWorker(sql, 30_000);
    const fetchesBefore = sandbox.stats().apiCalls["GET /orders/{order_id}"] ?? 0;
    const commitsBefore = await commitCount(sql);
    const adminLine = await worker.process.waitForLine((l) => l.msg === "admin listening");
    const metricsUrl = `${String(adminLine.url)}/metrics`;
    const stagesBefore = await readWorkerStages(metricsUrl);
    const jobTrace = trace ? await startJobTrace(sql) : undefined;
    const loopDelay = process.env.BENCH_VERBOSE ? watchLoopDelay() : undefined;
    measuring = true;
    const sent = await sendOrderTraffic({ ...traffic, seconds });
    measuring = false;
    const deadline = performance.now() + drainMs;
    while ((replica.waitingOrders > 0 || reader.waitingOrders > 0) && performance.now() < deadline) {
      await new Promise((r) => setTimeout(r, 50));
    }
    const refreshStages = stagesBetween(stagesBefore, await readWorkerStages(metricsUrl));
    const fetches = (sandbox.stats().apiCalls["GET /orders/{order_id}"] ?? 0) - fetchesBefore;
    const commits = (await commitCount(sql)) - commitsBefore;
    loopDelay?.stop();
    if (process.env.BENCH_VERBOSE) printWindows(replica.byAck);
    const stages = await jobTrace?.read();
    await jobTrace?.close();
    const direct = await directFetchLatency(sandbox);
    const receiverMemory = await readMemory(receiver.process.pid);
    const workerMemory = await readMemory(worker.process.pid);
    const unseen = replica.close();
    const readerUnseen = reader.close();
    const freshness = replica.freshness;
    const [rows] = await sql<{ n: number }[]>`select count(*)::int as n from replica.changes`;
    return {
      rate,
      seconds,
      apiDelayMs,
      acked: sent.acked,
      failed: sent.failed,
      p50: percentile(freshness, 50),
      p99: percentile(freshness, 99),
      max: percentile(freshness, 100),
      unseen,
      readerP50: percentile(reader.freshness, 50),
      readerP99: percentile(reader.freshness, 99),
      readerMax: percentile(reader.freshness, 100),
      readerUnseen,
      readerChanges: feed.read().changes,
      feedRows: rows!.n,
      ackP50: percentile(acks, 50),
      ackP99: percentile(acks, 99),
      fetchesPerEvent: fetches / Math.max(1, sent.acked),
      commitsPerEvent: commits / Math.max(1, sent.acked),
      directFetchP50: percentile(direct, 50),
      directFetchP99: percentile(direct, 99),
      receiverPeakRss: receiverMemory?.peak,
      workerPeakRss: workerMemory?.peak,
      workerConcurrency,
      stages,
      refreshStages,
    };
  } finally {
    await receiver.process.stop();
    await worker.process.stop();
    await watch.close();
    await feed.close();
    await sandbox.close();
  }
}

/** The same GET /orders/{id} the worker makes, timed from here with a warm token and connection. */
async function directFetchLatency(sandbox: Sandbox, samples = 50): Promise<number[]> {
  const client = new LoopsClient({
    apiUrl: sandbox.apiUrl,
    authUrl: sandbox.authUrl,
    clientId: sandbox.credentials.clientId,
    clientSecret: sandbox.credentials.clientSecret,
  });
  const merchantId = sandbox.merchantIds[0]!;
  const orderId = sandbox.truth.orders(merchantId)[0]!.id;
  const api = client.forMerchant(merchantId);
  await api.orders.get(orderId);
  const times: number[] = [];
  for (let i = 0; i < samples; i++) {
    const start = performance.now();
    await api.orders.get(orderId);
    times.push(performance.now() - start);
  }
  return times;
}

/** Until no stored event is pending (at most `timeoutMs`). */
export async function waitForIdleWorker(sql: Sql, timeoutMs: number): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  while (performance.now() < deadline) {
    const [row] = await sql<{ open: number }[]>`
      select count(*)::int as open from sync.events where outcome = 'pending'`;
    if (row!.open === 0) return;
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** Transactions committed in this database so far (pg_stat_database; the stats lag by up to ~0.5 s). */
async function commitCount(sql: Sql): Promise<number> {
  const [row] = await sql<{ n: number }[]>`
    select xact_commit::float8 as n from pg_stat_database where datname = current_database()`;
  return row!.n;
}

/** BENCH_VERBOSE: the bench process's own event-loop delay each second (it runs the sandbox and the load). */
function watchLoopDelay() {
  const h = monitorEventLoopDelay({ resolution: 5 });
  h.enable();
  const timer = setInterval(() => {
    const at = new Date().toISOString().slice(11, 23);
    process.stderr.write(
      `bench loop delay ${at}: max ${(h.max / 1e6).toFixed(0)} ms, p99 ${(h.percentile(99) / 1e6).toFixed(0)} ms\n`,
    );
    h.reset();
  }, 1000);
  return {
    stop() {
      clearInterval(timer);
      h.disable();
    },
  };
}

/**
 * BENCH_VERBOSE: freshness per second of the measured window (by ack time, with the wall clock), so a slow
 * second can be laid beside the processes' GC and log lines (a run's p99 can be made by one or two seconds
 * in which the worker's and the receiver's major GCs meet).
 */
function printWindows(byAck: [number, number][]) {
  if (byAck.length === 0) return;
  const start = byAck.reduce((min, [at]) => Math.min(min, at), Number.POSITIVE_INFINITY);
  const windows = new Map<number, number[]>();
  for (const [at, value] of byAck) {
    const w = Math.floor((at - start) / 1000);
    const list = windows.get(w);
    if (list) list.push(value);
    else windows.set(w, [value]);
  }
  for (const [w, values] of [...windows].sort((a, b) => a[0] - b[0])) {
    const at = new Date(performance.timeOrigin + start + w * 1000).toISOString().slice(11, 23);
    process.stderr.write(
      `freshness second ${w} (${at}): n=${values.length} p50 ${percentile(values, 50).toFixed(0)} ms, p99 ${percentile(values, 99).toFixed(0)} ms, max ${percentile(values, 100).toFixed(0)} ms\n`,
    );
  }
}
