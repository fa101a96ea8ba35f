import type postgres from "postgres";
import { CHANGES_CHANNEL, type ChangeResource } from "./change-feed.ts";
import { type Change, checkWhole, DEFAULT_CHANGES_LIMIT, filterJson, readChanges } from "./read-changes.ts";

export interface FollowChangesOptions {
  /** Yield changes with a position above this; 0 follows from the oldest retained. */
  after: number;
  /** Ends the iteration (cleanly, without an error) when aborted. Default: none, it runs until `break`. */
  signal?: AbortSignal;
  /** Changes read per query. Default: 1000. */
  limit?: number;
  /** Only changes of these resources (filtered in the database). Default: every resource. */
  resources?: readonly ChangeResource[];
  /** Only changes of these merchants (filtered in the database). Default: every merchant. */
  merchantIds?: readonly string[];
  /**
   * Milliseconds between reads when no notification comes: the fallback when NOTIFY is lost (a pooler in
   * transaction mode, a listener connection that is down). Default: 5000.
   */
  pollIntervalMs?: number;
  /**
   * Called when a read fails for a lost connection, before it is retried (with a backoff up to
   * `pollIntervalMs`). Other errors, {@link ChangesExpiredError} among them, end the iteration. Default: none.
   */
  onRetry?: (error: unknown) => void;
}

/** Errors of a connection that went away, which a later read on a new connection outlives. */
const TRANSIENT = new Set([
  "CONNECTION_CLOSED",
  "CONNECT_TIMEOUT",
  "ECONNREFUSED",
  "ECONNRESET",
  "EPIPE",
  "ETIMEDOUT",
  "EHOSTUNREACH",
  "57P01", // admin_shutdown (pg_terminate_backend)
  "57P02", // crash_shutdown
  "57P03", // cannot_connect_now
]);
export const isTransient = (error: unknown): boolean => {
  const code = (error as { code?: string })?.code ?? "";
  return TRANSIENT.has(code) || code.startsWith("08");
};

/** A doorbell: ring() any time; wait() returns at once if it rang since the last reset(). */
export function doorbell() {
  let rang = false;
  let wake: (() => void) | undefined;
  return {
    ring() {
      rang = true;
      wake?.();
    },
    reset() {
      rang = false;
    },
    wait(ms: number, signal: AbortSignal | undefined): Promise<void> {
      if (rang || signal?.aborted) return Promise.resolve();
      return new Promise<void>((resolve) => {
        const done = () => {
          clearTimeout(timer);
          signal?.removeEventListener("abort", done);
          wake = undefined;
          resolve();
        };
        const timer = setTimeout(done, ms);
        signal?.addEventListener("abort", done, { once: true });
        wake = done;
      });
    },
  };
}

/**
 * Every change after `after`, once and in position order, as they commit: reads pages until one comes back
 * short, then waits for a `LISTEN loops_sync_changes` notification, or `pollIntervalMs`, and reads again.
 * Postgres.js re-LISTENs after a reconnect and the next read starts from the last position yielded, so a
 * dropped connection loses nothing; a read that fails for a lost connection is retried. `sql` must be a pool
 * (`postgres(url)`), not a transaction: LISTEN holds a connection of its own.
 *
 * Positions are yielded once each: save `change.position` after handling a change and pass it as `after`
 * when the process restarts.
 */
export async function* followChanges(
  // biome-ignore lint/suspicious/noExplicitAny: any postgres.js pool, whatever its custom types
  sql: postgres.Sql<any>,
  {
    after,
    signal,
    limit = DEFAULT_CHANGES_LIMIT,
    pollIntervalMs = 5000,
    onRetry,
    resources,
    merchantIds,
  }: FollowChangesOptions,
): AsyncGenerator<Change, void, undefined> {
  let cursor = checkWhole("followChanges: after", after, 0);
  checkWhole("followChanges: limit", limit, 1, 10_000);
  checkWhole("followChanges: pollIntervalMs", pollIntervalMs, 1);
  filterJson("followChanges", resources, merchantIds);
  if (signal?.aborted) return;
  const bell = doorbell();
  // onlisten runs on every (re)connect of the listener: whatever committed while it was down is read then.
  const listening = await sql.listen(CHANGES_CHANNEL, bell.ring, bell.ring);
  let backoff = 100;
  try {
    while (!signal?.aborted) {
      // Reset before reading, so a notification that arrives during the read wakes the next wait at once.
      bell.reset();
      let page: Change[];
      try {
        page = await readChanges(sql, { after: cursor, limit, resources, merchantIds });
        backoff = 100;
      } catch (error) {
        if (!isTransient(error) || signal?.aborted) throw error;
        onRetry?.(error);
        await bell.wait(backoff, signal);
        backoff = Math.min(backoff * 2, pollIntervalMs);
        continue;
      }
      for (const change of page) {
        if (signal?.aborted) return;
        cursor = change.position;
        yield change;
      }
      if (page.length < limit) await bell.wait(pollIntervalMs, signal);
    }
  } finally {
    await listening.unlisten().catch(() => {});
  }
}
