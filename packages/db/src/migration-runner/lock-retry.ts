import { setTimeout as sleep } from "node:timers/promises";
import type { Sql } from "../connection/connect.ts";
import { DbError } from "../db-error.ts";
import { type BlockingProcess, blockingProcesses, describeBlocker } from "./blocking-processes.ts";

/** How long a step may wait for its locks, and for how long it keeps trying. */
export interface LockRetryOptions {
  /**
   * The longest lock_timeout of one try, in ms (at most 1000). Tries start at 100 ms and double up to it, so the
   * writers queued behind a waiting ALTER wait no longer than that. Default: 500.
   */
  lockTimeoutMs?: number;
  /** Give up on a step (exit 3, naming the process that holds the lock) after losing for this long, in ms. Default: 60 000. */
  giveUpAfterMs?: number;
}

const LOCK_NOT_AVAILABLE = "55P03";
const DEADLOCK_DETECTED = "40P01";

export interface LockRetryContext extends Required<LockRetryOptions> {
  /** A pool that is not the migrating session: it asks pg_blocking_pids while the session waits. */
  observer: Sql;
  /** The migrating session's backend pid. */
  sessionPid: number;
}

/**
 * Runs `attempt` (which sets the lock_timeout it is given) until it does not lose a lock: a lock timeout or a
 * deadlock rolls back only that try, so it is tried again after a growing, jittered pause (GitLab's
 * with_lock_retries). While a try waits, the blockers are looked up, so giving up can name them.
 */
export async function withLockRetries<T>(
  context: LockRetryContext,
  what: string,
  attempt: (lockTimeoutMs: number, tries: number) => Promise<T>,
): Promise<{ result: T; tries: number }> {
  const started = performance.now();
  let lastBlockers: BlockingProcess[] = [];
  for (let tries = 1; ; tries++) {
    const timeout = Math.min(context.lockTimeoutMs, 100 * 2 ** (tries - 1));
    let observed: Promise<void> = Promise.resolve();
    const timer = setTimeout(() => {
      observed = blockingProcesses(context.observer, context.sessionPid).then(
        (found) => {
          if (found.length > 0) lastBlockers = found;
        },
        () => {},
      );
    }, timeout * 0.6);
    try {
      return { result: await attempt(timeout, tries), tries };
    } catch (error) {
      clearTimeout(timer);
      const code = (error as { code?: string }).code;
      if (code !== LOCK_NOT_AVAILABLE && code !== DEADLOCK_DETECTED) throw error;
      const pause = Math.min(5000, 50 * 2 ** tries) * (0.5 + Math.random());
      const lost = performance.now() - started;
      if (lost + pause > context.giveUpAfterMs) {
        await observed;
        const blockers =
          lastBlockers.length > 0
            ? `blocked by ${lastBlockers.map(describeBlocker).join("; ")}`
            : "no blocker seen";
        throw new DbError(
          "migration",
          "migration_blocked",
          `${what} gave up after ${tries} tries in ${Math.round(lost / 1000)} s (${code === DEADLOCK_DETECTED ? "deadlock" : "lock timeout"}): ${blockers}; end that transaction or retry later — the applied steps stay applied and migrate resumes here`,
          { cause: error },
        );
      }
      await sleep(pause);
    } finally {
      clearTimeout(timer);
      await observed;
    }
  }
}
