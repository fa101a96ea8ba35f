import { EventEmitter } from "node:events";
import { scheduleCatchup } from "@loops-sync/catchup";
import { createLogger, createStopStack, type Logger } from "@loops-sync/config";
import { learnConfiguredMerchants, type Sql } from "@loops-sync/db";
import type { SyncApi } from "@loops-sync/loops-client";
import { DEFAULT_PAUSE_BACKOFF, type PauseBackoff } from "@loops-sync/replica";
import type { WorkerEvents } from "graphile-worker";
import type { Registry } from "prom-client";
import { createForwardMetrics } from "./forwarding/forward-metrics.ts";
import { type Forwarder, type ForwarderOptions, startForwarder } from "./forwarding/start-forwarder.ts";
import { graphileLogger } from "./jobs/graphile-logger.ts";
import { pausedFlagsCache } from "./jobs/paused-flags.ts";
import { createPoolRegistry } from "./jobs/pool-registry.ts";
import { absorbLostCompletions, createQueuePool } from "./jobs/queue-pool.ts";
import { startSupervisedRunner } from "./jobs/supervised-runner.ts";
import {
  CATCHUP_CRON,
  type CatchupJobOptions,
  type PruneJobOptions,
  workerJobs,
} from "./jobs/worker-jobs.ts";
import type { OrderBatchEvents } from "./orders/batch-value.ts";
import { startBudgetPressure } from "./orders/budget-pressure.ts";
import { startOrderConfirmer } from "./orders/order-confirmer.ts";
import { startOrderScheduler } from "./orders/order-scheduler.ts";
import { startBackgroundPacer } from "./reconcile/background-pacer.ts";
import { startPauseProber } from "./upstream/pause-prober.ts";
import type { WorkerContext } from "./worker-context.ts";
import { createWorkerMetrics } from "./worker-metrics.ts";

export interface StartWorkerOptions {
  /** The database holding the queue and the replica; graphile-worker opens its own pool on it. */
  databaseUrl: string;
  /** Our pool on the same database (postgres.js), for the replica and the inbox. */
  sql: Sql;
  /** The Loops API client (`LoopsClient` from @loops-sync/loops-client). */
  client: SyncApi;
  /** LOOPS_APPLICATION_ID: events it originated are ignored. Default: none. */
  applicationId?: string;
  /** Jobs run at once in this process. Default: 8. */
  concurrency?: number;
  /** Default: a silent logger. */
  logger?: Logger;
  /** Merchants from configuration (LOOPS_MERCHANT_IDS), synced even before any event names them. Default: []. */
  merchantIds?: readonly string[];
  /** How often to look for scheduled and retried jobs (new jobs arrive by LISTEN/NOTIFY). Default: 2000 ms. */
  pollIntervalMs?: number;
  /** prom-client registry for the worker's metrics. Default: a registry of its own. */
  registry?: Registry;
  /**
   * RECONCILE_CRON: each active merchant's mirrored resources are reconciled once per its interval, at the
   * merchant's own offset (reconcile/background-pacer.ts). Default: every 15 minutes.
   */
  resourcesCron?: string;
  /** When each revoked merchant's connection is probed for a reconnect (REVOKED_PROBE_CRON). Default: hourly. */
  revokedProbeCron?: string;
  /**
   * RECONCILE_BUDGET_SHARE: the share of `maxRps` the background trickles (the reconcile, catch-up) are sized
   * for together; their intervals stretch when the merchants do not fit. Default: 0.5.
   */
  reconcileShare?: number;
  /** How often the trickles look for due merchants. Default: 1000 ms. */
  reconcileStepMs?: number;
  /** A worker process silent this long is dead and its jobs are released. Default: 60 000 ms. */
  deadWorkerAfterMs?: number;
  /** On stop, how long running jobs may finish before their calls are aborted and they are released. Default: 5000 ms. */
  shutdownAbortAfterMs?: number;
  /**
   * Order batches run at once; each batch holds one connection of `sql` while it fetches, and the answers
   * are committed on one more, so it must be below `sql`'s pool size (which must be at least 2). Default:
   * half of `sql`'s pool size.
   */
  orderRefreshConcurrency?: number;
  /** How often the order refresher looks for queued orders without a NOTIFY. Default: `pollIntervalMs`, at most 1000 ms. */
  orderRefreshPollMs?: number;
  /** How long an order batch takes more of its merchant's rows once it fetches. Default: 500 ms (order-batch.ts). */
  orderBatchJoinMs?: number;
  /**
   * An order batch with this many orders to fetch reads them from one `GET /orders?updated_since=` page
   * instead of one `GET /orders/{id}` each. Default: 2 (LIST_FETCH_MIN_ORDERS, order-batch.ts).
   */
  orderListFetchMin?: number;
  /**
   * LOOPS_MAX_RPS. With it, order batches read list pages only while the shared request budget is busy
   * (orders/budget-pressure.ts); without it, whenever a batch has `orderListFetchMin` orders to fetch.
   */
  maxRps?: number;
  /** How long a status event past a version gap (v3 before v2) waits for it. Default: 1000 ms (plan-order.ts). */
  orderReorderWaitMs?: number;
  /**
   * Run the reconcile trickle: at start, the merchants never reconciled or whose slot has come (none whose
   * last run is recent), then each at its offset. Default: true.
   */
  refreshResourcesAtStart?: boolean;
  /**
   * How long a scope paused by a refusal of Loops waits between probes (PAUSE_PROBE_FIRST_SECONDS,
   * PAUSE_PROBE_MAX_SECONDS). Default: DEFAULT_PAUSE_BACKOFF (upstream-pause.ts).
   */
  pauseBackoff?: PauseBackoff;
  /**
   * A Postgres outage this short (HEALTH_DATABASE_GRACE_SECONDS) is waited out by the queue's connections
   * instead of failing them. Default: 60 s.
   */
  databaseGraceSeconds?: number;
  /**
   * Catch up from the event log: each merchant once per CATCHUP_CRON's interval at its own offset (a trickle
   * beside the reconcile's, in the same share), and at start the merchants whose last complete catch-up is
   * older than the interval, or missing (jobs/worker-jobs.ts). Default: off.
   */
  catchup?: CatchupJobOptions;
  /** Prune finished rows daily, as `loops-sync prune` does (jobs/worker-jobs.ts). Default: off. */
  prune?: PruneJobOptions;
  /** Forward every change to the partner's endpoint (FORWARD_URL, …). Default: off. */
  forward?: Omit<ForwarderOptions, "sql" | "logger" | "registry">;
  /**
   * CONFIRM_WITHIN_SECONDS: a row applied from an order.status_changed payload is confirmed by a fetch within
   * this (orders/order-confirmer.ts). Default: 300.
   */
  confirmWithinSeconds?: number;
}

export interface RunningWorker {
  /** Graceful stop: running jobs finish, or are released back to the queue after `shutdownAbortAfterMs`. */
  stop(): Promise<void>;
  /**
   * Why the job runner stopped without stop() being called (e.g. a newer graphile-worker announced a breaking
   * migration of its schema), or undefined while it runs. Such a process takes no more jobs: restart it.
   */
  stoppedBecause(): string | undefined;
  /**
   * The order batches: their events (claimed, joined, committed, ended; orders/batch-value.ts), fetches
   * waiting for a slot, and whether they read list pages now (the request budget is busy; never without
   * `maxRps`).
   */
  readonly orderBatches: {
    readonly events: EventEmitter<OrderBatchEvents>;
    readonly fetchesWaiting: number;
    readonly bulkReads: boolean;
  };
}

/**
 * Starts the graphile-worker runner with loops-sync's tasks. Installs no signal handlers: the caller (the
 * CLI) maps SIGTERM/SIGINT to `stop()`. graphile-worker's schema must already be migrated (`migrate()`).
 */
export async function startWorker({
  databaseUrl,
  sql,
  client,
  applicationId,
  concurrency = 8,
  logger = createLogger({ name: "worker", level: "silent" }),
  merchantIds = [],
  pollIntervalMs = 2000,
  registry,
  resourcesCron = "*/15 * * * *",
  revokedProbeCron,
  reconcileShare = 0.5,
  reconcileStepMs,
  deadWorkerAfterMs = 60_000,
  shutdownAbortAfterMs = 5000,
  refreshResourcesAtStart = true,
  orderRefreshConcurrency,
  orderBatchJoinMs,
  orderListFetchMin,
  maxRps,
  orderReorderWaitMs,
  orderRefreshPollMs,
  pauseBackoff = DEFAULT_PAUSE_BACKOFF,
  databaseGraceSeconds = 60,
  catchup,
  prune,
  forward,
  confirmWithinSeconds,
}: StartWorkerOptions): Promise<RunningWorker> {
  if (!Number.isInteger(concurrency) || concurrency < 1) {
    throw new RangeError(`startWorker: concurrency must be a whole number of at least 1, got ${concurrency}`);
  }
  const poolSize = (sql as { options?: { max?: number } }).options?.max ?? 10;
  const batches = orderRefreshConcurrency ?? Math.floor(poolSize / 2);
  if (poolSize < 2 || !Number.isInteger(batches) || batches < 1 || batches >= poolSize) {
    throw new RangeError(
      `startWorker: the order batches (${batches}) need a pool (DATABASE_POOL_SIZE, now ${poolSize}) of at least 2 ` +
        "and larger than the batches: each batch holds a connection while it fetches, and their commits need one more",
    );
  }
  const metrics = createWorkerMetrics(registry);
  const ctx: WorkerContext = { sql, client, logger, metrics, applicationId, pauseBackoff };
  const jobs = workerJobs(ctx, {
    resourcesCron,
    merchantIds,
    catchup,
    prune,
    revokedProbeCron,
    maxRps,
    reconcileShare,
  });

  await learnConfiguredMerchants(sql, merchantIds);

  const pools = createPoolRegistry({ sql, logger, deadAfterMs: deadWorkerAfterMs });
  const events: WorkerEvents = new EventEmitter();

  const forbiddenFlags = pausedFlagsCache(sql, logger);

  // Our own pg pool for graphile-worker, so an idle connection dropped by a Postgres restart is logged
  // (and replaced on next use) instead of crashing the process, and stop() can wait for it to close.
  // It also rides out a Postgres outage (see jobs/queue-pool.ts).
  const pgPool = createQueuePool({
    connectionString: databaseUrl,
    max: concurrency + 2,
    graceMs: databaseGraceSeconds * 1000,
    logger,
  });
  const lost = (error: Error) =>
    logger.warn({ error: error.message }, "queue connection lost; it will be replaced");
  pgPool.on("error", lost);
  pgPool.on("connect", (client) => client.on("error", lost));
  // Each part's stop as soon as it runs: a start that fails halfway stops what ran, last first, and so does
  // stop(). The parts above the queue stop side by side, so their drains (up to shutdownAbortAfterMs) overlap.
  const stops = createStopStack({ logger });
  stops.push("job queue", async () => {
    try {
      await pools.close();
    } finally {
      await pgPool.end();
    }
  });
  const stopAllOnFailure = async (error: unknown): Promise<never> => {
    await stops.stopAll();
    throw error;
  };

  let stopping: Promise<void> | undefined;
  let stoppedBecause: string | undefined;
  // graphile-worker stops its runner by itself on some failures (a breaking migration of its schema by a newer
  // version, a pool that lost every worker); the process then takes no jobs and only a restart helps.
  const onRunnerEnd = (error?: unknown) => {
    if (stopping || stoppedBecause) return;
    stoppedBecause = `the job runner stopped${error ? `: ${(error as Error).message ?? error}` : ""}`;
    logger.error({ reason: stoppedBecause }, "worker runner stopped; this process takes no more jobs");
  };
  // A run whose claim of a job lost its answer is replaced by a new one (jobs/supervised-runner.ts).
  const runner = await startSupervisedRunner({
    options: {
      pgPool,
      concurrency,
      noHandleSignals: true,
      pollInterval: pollIntervalMs,
      gracefulShutdownAbortTimeout: shutdownAbortAfterMs,
      logger: graphileLogger(logger),
      events,
      forbiddenFlags,
      taskList: jobs.taskList,
      crontab: jobs.crontab,
    },
    pools,
    logger,
    onEnd: onRunnerEnd,
  }).catch(stopAllOnFailure);
  stops.push("job runner", () => runner.stop());
  // Jobs of a predecessor killed mid-job are released as soon as its heartbeat is old enough.
  await pools.sweep().catch(stopAllOnFailure);
  // A start is not a reason to call Loops: catch-up at start takes only the merchants whose last complete run is
  // older than its interval (a tick was missed) or missing, and the trickles queue only what is due. The start's
  // run is queued first, so the catch-up trickle leaves the merchants it lists to it.
  if (catchup) await scheduleCatchup(sql, { dueOnly: true }).catch(stopAllOnFailure);
  const pacer =
    refreshResourcesAtStart || catchup
      ? startBackgroundPacer(ctx, {
          cron: resourcesCron,
          reconcile: refreshResourcesAtStart,
          catchupCron: catchup ? (catchup.cron ?? CATCHUP_CRON) : undefined,
          maxRps,
          share: reconcileShare,
          ...(reconcileStepMs ? { stepMs: reconcileStepMs } : {}),
        })
      : undefined;
  if (pacer) stops.beside("background pacer", () => pacer.stop());
  const pressure = maxRps === undefined ? undefined : startBudgetPressure({ sql, maxRps, logger });
  if (pressure) stops.beside("budget pressure", () => pressure.stop());
  const refresher = await startOrderScheduler(ctx, {
    concurrency: batches,
    joinMs: orderBatchJoinMs,
    listFetchMin: orderListFetchMin,
    ...(pressure ? { bulkReads: pressure.busy } : {}),
    reorderWaitMs: orderReorderWaitMs,
    pollIntervalMs: orderRefreshPollMs ?? Math.min(pollIntervalMs, 1000),
  }).catch(stopAllOnFailure);
  stops.beside("order refresher", () => refresher.stop(shutdownAbortAfterMs));
  // Registered with forwarding off too, so dashboards and alerts find the series (the gauges stay empty).
  createForwardMetrics(metrics.registry, sql);
  let forwarder: Forwarder | undefined;
  if (forward) {
    forwarder = await startForwarder({
      ...forward,
      sql,
      registry: metrics.registry,
      logger: logger.child({ name: "forward" }),
    }).catch(stopAllOnFailure);
    stops.beside("forwarder", () => forwarder?.stop(shutdownAbortAfterMs));
  }
  const prober = startPauseProber(ctx);
  stops.beside("pause prober", () => prober.stop());
  const confirmer = startOrderConfirmer(ctx, { withinSeconds: confirmWithinSeconds });
  stops.beside("order confirmer", () => confirmer.stop());
  logger.info({ concurrency, merchants: merchantIds.length }, "worker started");

  return {
    orderBatches: {
      events: refresher.events,
      get fetchesWaiting() {
        return refresher.fetchesWaiting;
      },
      get bulkReads() {
        return pressure?.busy() ?? false;
      },
    },
    stoppedBecause: () => stoppedBecause,
    stop() {
      stopping ??= (async () => {
        const stopAbsorbing = absorbLostCompletions(logger);
        pgPool.stopWaiting();
        // Each failure is logged by the stack; the rest still stop, the queue last.
        await stops.stopAll();
        setImmediate(stopAbsorbing);
        logger.info("worker stopped");
      })();
      return stopping;
    },
  };
}
