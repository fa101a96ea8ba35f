import type postgres from "postgres";
import { CHANGES_CHANNEL, type ChangeResource } from "./change-feed.ts";
import { pollFeed } from "./poll-feed.ts";
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
  // pollFeed reads in callback form; each page is handed to this generator's caller, and the next read waits
  // until the caller asks for more, so a slow caller is never read ahead of and the cursor is the last yielded.
  const stop = new AbortController();
  const abort = () => stop.abort();
  signal?.addEventListener("abort", abort, { once: true });
  const pages = pageHandOff<Change[]>();
  const loop = pollFeed(
    sql,
    { channels: [{ name: CHANGES_CHANNEL }], signal: stop.signal, pollIntervalMs, onRetry },
    async () => {
      const page = await readChanges(sql, { after: cursor, limit, resources, merchantIds });
      if (page.length > 0) await pages.offer(page);
      return { more: page.length >= limit };
    },
  ).then(
    () => pages.close(),
    (error: unknown) => pages.close(error),
  );
  try {
    for (let page = await pages.take(); page; page = await pages.take()) {
      for (const change of page) {
        if (signal?.aborted) return;
        cursor = change.position;
        yield change;
      }
    }
  } finally {
    signal?.removeEventListener("abort", abort);
    stop.abort();
    pages.close();
    await loop;
  }
}

/**
 * One page at a time from the loop to the generator: `offer` resolves when the taker asks for the next page (it
 * is done with this one) or the hand-off closes; `take` returns undefined once closed, or throws the loop's error.
 */
function pageHandOff<T>() {
  let closed = false;
  let failure: unknown;
  let pending: T | undefined;
  let done: (() => void) | undefined;
  let arrived: (() => void) | undefined;
  return {
    offer(page: T): Promise<void> {
      if (closed) return Promise.resolve();
      pending = page;
      arrived?.();
      return new Promise<void>((resolve) => {
        done = resolve;
      });
    },
    async take(): Promise<T | undefined> {
      done?.();
      done = undefined;
      while (pending === undefined && !closed) {
        await new Promise<void>((resolve) => {
          arrived = resolve;
        });
      }
      arrived = undefined;
      const page = pending;
      pending = undefined;
      if (page === undefined && failure !== undefined) throw failure;
      return page;
    },
    close(error?: unknown): void {
      if (closed) return;
      closed = true;
      failure = error;
      done?.();
      arrived?.();
    },
  };
}
