import { EventEmitter } from "node:events";
import { setTimeout as delay } from "node:timers/promises";
import type { Logger } from "@loops-sync/config";
import { backoffMs } from "@loops-sync/loops-client";
import pg from "pg";

export interface QueuePoolOptions {
  connectionString: string;
  /** Connections at most. */
  max: number;
  /** After this long away (HEALTH_DATABASE_GRACE_SECONDS), the wait is logged as a warning. */
  graceMs: number;
  logger: Logger;
}

/**
 * graphile-worker's statements that may be sent again on a new connection when the first one broke: a job's
 * completion deletes it by id, and its failure only updates rows this pool still locks, so a second run
 * changes nothing the first did (prepared statement names, graphile-worker 0.18 `sql/completeJobs.ts` and
 * `sql/failJobs.ts`; `preparedStatements` is on by default).
 */
const IDEMPOTENT = /^(complete_jobs?|complete_job_q|fail_job|fail_job_q)\//;
/**
 * graphile-worker's claim of a job (`get_job`, `get_job5F`, … in its `sql/getJobs.ts`): an `update … returning`
 * that locks the job by the pool id, its first value. Without prepared statements it is matched by its text.
 */
const CLAIM_NAME = /^get_job\d*F?N?\//;
const CLAIM_TEXT = /_private_jobs as jobs\s+set\s+attempts = jobs\.attempts \+ 1,\s+locked_by = \$1::text/;

/** The pool id a query is claiming jobs for, when it is graphile-worker's claim; else undefined. */
function claimingPool(query: unknown): string | undefined {
  if (typeof query !== "object" || query === null) return undefined;
  const { name, text, values } = query as { name?: unknown; text?: unknown; values?: unknown };
  const isClaim =
    (typeof name === "string" && CLAIM_NAME.test(name)) ||
    (typeof text === "string" && CLAIM_TEXT.test(text));
  const poolId = Array.isArray(values) ? values[0] : undefined;
  return isClaim && typeof poolId === "string" ? poolId : undefined;
}
/** A few connections of one process wait for Postgres to come back: doubling, no jitter. */
const WAIT_FOR_POSTGRES = { baseMs: 100, capMs: 2000, jitter: false };

/**
 * Connection-level errors: nothing was answered, and a new connection may succeed. The last three are
 * postgres.js's own (the pool registry's statements, pool-registry.ts); CONNECTION_ENDED, a pool its owner
 * ended, is not among them.
 */
const LOST_CODES = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "EPIPE",
  "ETIMEDOUT",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "CONNECTION_CLOSED",
  "CONNECTION_DESTROYED",
  "CONNECT_TIMEOUT",
]);
const LOST_MESSAGE = /connection terminated|not queryable|timeout exceeded when trying to connect/i;

/** Whether `error` is Postgres going away rather than an answer from it. */
export function isConnectionLoss(error: unknown): boolean {
  if (typeof error !== "object" || error === null) return false;
  const { code, message } = error as { code?: unknown; message?: unknown };
  if (
    typeof code === "string" &&
    // 53300: the server refused a new connection (max_connections reached); nothing was sent, and a
    // connection freed elsewhere lets the next try in. Unridden, a completion ended the process.
    (LOST_CODES.has(code) || code.startsWith("08") || /^57P0[123]$/.test(code) || code === "53300")
  ) {
    return true;
  }
  return typeof message === "string" && LOST_MESSAGE.test(message);
}

/** What the queue pool tells about graphile-worker's claims. */
export interface ClaimEvents {
  /**
   * A claim of jobs for `poolId` lost its connection before its answer arrived. The claim may have committed:
   * then a job is locked by `poolId` that no worker of that pool knows of.
   */
  lost: [poolId: string, error: Error];
}

export interface QueuePool extends pg.Pool {
  /** Claims whose answer was lost (see ClaimEvents): the job runner renews its pool on `lost`. */
  readonly claims: EventEmitter<ClaimEvents>;
  /**
   * Ends every wait for Postgres: from now on a lost connection fails at once. Called when the process
   * stops, so a shutdown during an outage does not wait for Postgres to come back.
   */
  stopWaiting(): void;
}

/**
 * The pg pool graphile-worker runs on, made to ride out a Postgres outage of any length.
 * graphile-worker does not await a job's completion (`completeJob(job)` in its worker loop, and its
 * `withRetries` retries only a few SQLSTATEs), so a completion whose query meets a lost connection is an
 * unhandled rejection and ends the process. Its documentation lets the caller supply the pool
 * (`run({ pgPool })`), so the fix lives here: `connect()` waits for Postgres (with backoff) instead of failing,
 * and a completion or failure statement whose connection broke is sent again on a new one, for as long as
 * Postgres stays away and the process is not stopping. Whether the process should be restarted meanwhile is
 * for `/healthz` to say (`database_lost` after HEALTH_DATABASE_GRACE_SECONDS), not for a crash. Other
 * statements fail as before, and graphile-worker handles them (a job's own failure is retried).
 */
export function createQueuePool({ connectionString, max, graceMs, logger }: QueuePoolOptions): QueuePool {
  const pool = new pg.Pool({ connectionString, max, application_name: "loops-sync-worker" }) as QueuePool;
  const connectOnce = pool.connect.bind(pool) as () => Promise<pg.PoolClient>;
  const stopped = new AbortController();
  pool.stopWaiting = () => stopped.abort();
  const claims = new EventEmitter<ClaimEvents>();
  Object.defineProperty(pool, "claims", { value: claims });

  /** Runs `attempt` again while Postgres is away, until the pool ends or `stopWaiting()` is called. */
  async function ride<T>(what: string, attempt: () => Promise<T>): Promise<T> {
    const since = Date.now();
    let warned = false;
    for (let retry = 0; ; retry++) {
      try {
        return await attempt();
      } catch (error) {
        if (!isConnectionLoss(error) || pool.ending || stopped.signal.aborted) throw error;
        const away = Date.now() - since;
        const wait = backoffMs(retry, WAIT_FOR_POSTGRES);
        const fields = { what, error: (error as Error).message, awayMs: away, retryInMs: wait };
        if (away >= graceMs && !warned) {
          warned = true;
          logger.warn(fields, "Postgres still away; the queue keeps waiting");
        } else {
          logger.debug(fields, "Postgres away; waiting");
        }
        await delay(wait, undefined, { signal: stopped.signal }).catch(() => {});
      }
    }
  }

  type Query = (...args: unknown[]) => Promise<unknown>;
  // The pool hands out the same client objects again: each is wrapped once, its own query kept here.
  const rawQuery = new WeakMap<pg.PoolClient, Query>();
  const rawQueryOf = (client: pg.PoolClient): Query => {
    const known = rawQuery.get(client);
    if (known) return known;
    const own = client.query.bind(client) as Query;
    rawQuery.set(client, own);
    client.query = ((...args: unknown[]) => {
      const name = (args[0] as { name?: unknown } | null)?.name;
      const claimFor = typeof args.at(-1) === "function" ? undefined : claimingPool(args[0]);
      if (claimFor !== undefined) {
        // Never sent again: a claim that committed would lock a second job. Told instead, so the pool that
        // may now hold a job nobody runs is retired (supervised-runner.ts).
        return own(...args).catch((error: unknown) => {
          // "not queryable": the connection was dead before the claim was sent, so nothing was claimed.
          if (isConnectionLoss(error) && !/not queryable/.test((error as Error).message)) {
            claims.emit("lost", claimFor, error as Error);
          }
          throw error;
        });
      }
      if (typeof name !== "string" || !IDEMPOTENT.test(name) || typeof args.at(-1) === "function") {
        return own(...args);
      }
      return own(...args).catch((error: unknown) => {
        if (!isConnectionLoss(error)) throw error;
        // Sent again on a new connection, as often as Postgres stays away.
        return ride(name, async () => {
          const fresh = await connectOnce();
          try {
            const result = await rawQueryOf(fresh)(...args);
            fresh.release();
            return result;
          } catch (retryError) {
            fresh.release(retryError as Error);
            throw retryError;
          }
        });
      });
    }) as typeof client.query;
    return own;
  };

  const connect = (): Promise<pg.PoolClient> =>
    ride("connect", async () => {
      const client = await connectOnce();
      rawQueryOf(client);
      return client;
    });

  pool.connect = ((callback?: (...args: unknown[]) => void) => {
    if (!callback) return connect();
    connect().then(
      (client) => callback(undefined, client, client.release.bind(client)),
      (error: unknown) => callback(error),
    );
  }) as typeof pool.connect;
  return pool;
}

/**
 * While the process stops during an outage, completions graphile-worker did not await fail once the pool
 * stops waiting (`stopWaiting()`, then `end()`); unhandled, each would end the process with a stack trace.
 * Until the returned function is called, such a failure is logged instead: its job is still locked by this
 * pool, and runs again once the pool's heartbeat is old enough (pool-registry.ts). Any other unhandled
 * rejection still ends the process.
 */
export function absorbLostCompletions(logger: Logger): () => void {
  const onRejection = (reason: unknown) => {
    const ended = reason instanceof Error && /after calling end on the pool/.test(reason.message);
    if (!isConnectionLoss(reason) && !ended) throw reason;
    logger.warn(
      { error: (reason as Error).message },
      "a job's end was not recorded while stopping without Postgres; it runs again later",
    );
  };
  process.on("unhandledRejection", onRejection);
  return () => process.off("unhandledRejection", onRejection);
}
