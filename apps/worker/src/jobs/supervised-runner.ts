import { setTimeout as delay } from "node:timers/promises";
import type { Logger } from "@loops-sync/config";
import { backoffMs } from "@loops-sync/loops-client";
import { type Runner, type RunnerOptions, run, type WorkerEvents, type WorkerPool } from "graphile-worker";
import type { PoolRegistry } from "./pool-registry.ts";
import type { QueuePool } from "./queue-pool.ts";

export interface SupervisedRunnerOptions {
  /** graphile-worker's options; `pgPool` must be the queue pool, `events` the emitter shared by every run. */
  options: RunnerOptions & { pgPool: QueuePool; events: WorkerEvents };
  /** Where each run's pool keeps its heartbeat, and where a replaced pool is retired. */
  pools: PoolRegistry;
  logger: Logger;
  /** Called when the current run ends without stop() (graphile-worker stopped it), with its error if any. */
  onEnd: (error?: unknown) => void;
}

export interface SupervisedRunner {
  /** The pool id of the current run: the value graphile-worker writes into `locked_by`. */
  readonly poolId: string;
  /** How many times the run was replaced because a claim's answer was lost. */
  readonly renewals: number;
  /** Stops the current run and any replaced one still finishing its jobs. */
  stop(): Promise<void>;
}

interface Run {
  runner: Runner;
  workerPool: WorkerPool;
  poolId: string;
  ended: boolean;
  /** Stopped by us to be replaced: its end is not the process's. */
  replaced: boolean;
}

/**
 * graphile-worker's runner, replaced by a new one (a new pool id) whenever a claim of jobs lost its answer
 * (queue-pool.ts). Such a claim may have committed: a job is then locked by the pool id, and no worker of that
 * pool knows it, so without this it waits for graphile-worker's 4-hour lock expiry. graphile-worker can only
 * release locks by pool id (`force_unlock_workers`), so the pool is retired instead: the old run finishes what
 * it runs (or releases it after `gracefulShutdownAbortTimeout`), then every lock still held by its id, a
 * job's and its named queue's, is released (pool-registry.ts `retire`), and a new run takes jobs.
 */
export async function startSupervisedRunner({
  options,
  pools,
  logger,
  onEnd,
}: SupervisedRunnerOptions): Promise<SupervisedRunner> {
  const { pgPool, events } = options;
  // Declared before the first run starts: that run can end before start() returns, and its end reads it.
  let stopping = false;
  /** Aborted by stop(): a retire still waiting for Postgres leaves its pool to the sweep. */
  const stopAsked = new AbortController();
  let created: WorkerPool | undefined;
  const registered: Promise<void>[] = [];
  events.on("pool:create", ({ workerPool }) => {
    created = workerPool;
    registered.push(
      pools.register(workerPool.id).catch((error) => logger.warn({ error }, "pool registration failed")),
    );
  });

  const start = async (): Promise<Run> => {
    created = undefined;
    const runner = await run(options);
    await Promise.all(registered.splice(0));
    // Set by the pool:create event during run().
    const workerPool = created as WorkerPool | undefined;
    if (!workerPool) throw new Error("graphile-worker started a run without creating its worker pool");
    const started: Run = {
      runner,
      workerPool,
      poolId: workerPool.id,
      ended: false,
      replaced: false,
    };
    const ended = (error?: unknown) => {
      started.ended = true;
      if (!started.replaced && !stopping) onEnd(error);
    };
    runner.promise.then(() => ended(), ended);
    return started;
  };

  let current = await start();
  let renewals = 0;
  /** Pools whose claim lost its answer; the current one among them is replaced. */
  const lost = new Set<string>();
  /** Replaced runs still finishing their jobs, then retired. */
  const retiring = new Map<string, Promise<void>>();
  let renewing: Promise<void> | undefined;

  // A job that ignores its abort signal must not keep the queue from being served, nor the lost claim locked.
  const stopWaitMs = (options.gracefulShutdownAbortTimeout ?? 5000) + 5000;

  /**
   * Stops a replaced run: gracefully, and if its jobs have not ended `stopWaitMs` later, forcefully (graphile-
   * worker fails them, so they are retried). Then nothing runs under its id, and what it still locks is
   * released.
   */
  const retire = async (old: Run) => {
    const reason = "replaced after a claim lost its answer";
    const stopped = (old.ended ? Promise.resolve() : old.runner.stop(reason)).then(
      () => true,
      (error: unknown) => {
        logger.warn(
          { pool: old.poolId, error: (error as Error).message },
          "a replaced job pool stopped with an error",
        );
        return true;
      },
    );
    const inTime = await Promise.race([stopped, delay(stopWaitMs, false, { ref: false })]);
    if (!inTime) {
      logger.warn(
        { pool: old.poolId },
        "a replaced job pool's jobs did not end when aborted; they are failed and retried",
      );
      await Promise.resolve(old.workerPool.forcefulShutdown(reason)).catch((error: unknown) =>
        logger.warn(
          { pool: old.poolId, error: (error as Error).message },
          "forceful stop of a replaced job pool failed",
        ),
      );
    }
    // Often while Postgres is still away (a lost claim comes with an outage): it waits for Postgres.
    await pools.retire(old.poolId, { signal: stopAsked.signal });
    lost.delete(old.poolId);
  };

  /** Starts a new run, retrying while Postgres is away; undefined when the process stops meanwhile. */
  const startAgain = async (): Promise<Run | undefined> => {
    for (let retry = 0; !stopping; retry++) {
      try {
        return await start();
      } catch (error) {
        if (stopping) break;
        const wait = backoffMs(retry, { baseMs: 500, capMs: 5000, jitter: false });
        logger.warn(
          { error: (error as Error).message, retryInMs: wait },
          "could not start a new job pool yet",
        );
        await delay(wait);
      }
    }
    return undefined;
  };

  const renew = async () => {
    while (!stopping && lost.has(current.poolId)) {
      const old = current;
      old.replaced = true;
      const retired = retire(old).finally(() => retiring.delete(old.poolId));
      retiring.set(old.poolId, retired);
      // The new run starts once the old one has stopped: their jobs together could need more connections
      // than DATABASE_POOL_SIZE has, and a job holding a transaction while it waits for another would stall.
      await Promise.race([retired, delay(2 * stopWaitMs, undefined, { ref: false })]);
      const next = await startAgain();
      if (!next) return;
      current = next;
      renewals += 1;
      logger.warn(
        { pool: old.poolId, newPool: next.poolId },
        "a job claim lost its answer; the job pool was replaced, and the old one retired",
      );
    }
  };

  pgPool.claims.on("lost", (poolId, error) => {
    if (stopping || retiring.has(poolId)) return;
    logger.warn({ pool: poolId, error: error.message }, "a job claim lost its answer; it may hold a job");
    lost.add(poolId);
    // After graphile-worker has seen the claim fail: a worker stopped before that exits with an error trace.
    renewing ??= new Promise<void>((resolve) => setImmediate(resolve))
      .then(renew)
      .catch((renewError: unknown) =>
        logger.error({ error: (renewError as Error).message }, "replacing the job pool failed"),
      )
      .finally(() => {
        renewing = undefined;
      });
  });

  return {
    get poolId() {
      return current.poolId;
    },
    get renewals() {
      return renewals;
    },
    async stop() {
      stopping = true;
      stopAsked.abort();
      await renewing;
      // A runner that stopped by itself refuses a second stop.
      const stopCurrent = current.ended || current.replaced ? Promise.resolve() : current.runner.stop();
      await Promise.all([stopCurrent, ...retiring.values()]);
      // Its claim was lost before the process stopped: nothing of this process runs it any more.
      if (lost.has(current.poolId)) await pools.retire(current.poolId, { signal: stopAsked.signal });
    },
  };
}
