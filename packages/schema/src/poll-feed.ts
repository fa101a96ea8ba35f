import type postgres from "postgres";
import { isStandby, watchReplay } from "./watch-replay.ts";

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

/** A channel to LISTEN on; `wakes` picks the notifications that concern this reader. Default: every one. */
export interface WakeChannel {
  name: string;
  wakes?: (payload: string) => boolean;
}

/** What tells the loop that something new may be there. */
export interface WakeUps {
  /** Forget earlier wake-ups: called before each read, so one that arrives during the read still counts. */
  reset(): void;
  /** Wait for a wake-up since the last reset, at most `ms`; returns at once when `signal` is aborted. */
  wait(ms: number, signal: AbortSignal | undefined): Promise<void>;
  close(): Promise<void>;
}

/**
 * Wake-ups by LISTEN: a notification on any of `channels` rings, and so does every (re)connect of the listener
 * (postgres.js re-LISTENs), so whatever committed while it was down is read then. On a standby, the commits it
 * replays ring instead (`watchReplay`).
 */
export async function listenForWakeUps(
  // biome-ignore lint/suspicious/noExplicitAny: any postgres.js pool, whatever its custom types
  sql: postgres.Sql<any>,
  channels: readonly WakeChannel[],
): Promise<WakeUps> {
  let rang = false;
  let wake: (() => void) | undefined;
  const ring = () => {
    rang = true;
    wake?.();
  };
  const listening: { unlisten(): Promise<void> }[] = [];
  // A standby refuses LISTEN and replays no notification: its replayed commits ring instead.
  if (await isStandby(sql)) listening.push(watchReplay(sql, ring));
  else
    try {
      for (const { name, wakes } of channels) {
        listening.push(await sql.listen(name, (payload) => (wakes?.(payload) ?? true) && ring(), ring));
      }
    } catch (error) {
      for (const l of listening) await l.unlisten().catch(() => {});
      throw error;
    }
  return {
    reset: () => {
      rang = false;
    },
    wait(ms, signal) {
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
    async close() {
      for (const l of listening) await l.unlisten().catch(() => {});
    },
  };
}

export interface PollFeedOptions {
  /** Channels whose notifications wake the loop. */
  channels: readonly WakeChannel[];
  /** Ends the loop (cleanly) when aborted. */
  signal?: AbortSignal;
  /** Milliseconds between reads when no wake-up comes, and the ceiling of the retry backoff. */
  pollIntervalMs: number;
  /** Called when a read fails for a lost connection, before it is retried. */
  onRetry?: (error: unknown) => void;
}

/**
 * The feed readers' one loop (`followChanges`, `consumeChanges`): `read()` once, and again at once while it
 * says more is waiting; otherwise wait for a wake-up or `pollIntervalMs`. A read that fails for a lost
 * connection is retried with a backoff from 100 ms up to `pollIntervalMs`; any other error ends the loop
 * (rejects). Stops when `signal` aborts. `sql` must be a pool: LISTEN holds a connection of its own.
 */
export async function pollFeed(
  // biome-ignore lint/suspicious/noExplicitAny: any postgres.js pool, whatever its custom types
  sql: postgres.Sql<any>,
  { channels, signal, pollIntervalMs, onRetry }: PollFeedOptions,
  read: () => Promise<{ more: boolean }>,
): Promise<void> {
  if (signal?.aborted) return;
  const wakeUps = await listenForWakeUps(sql, channels);
  let backoff = 100;
  try {
    while (!signal?.aborted) {
      wakeUps.reset();
      let more: boolean;
      try {
        ({ more } = await read());
        backoff = 100;
      } catch (error) {
        if (!isTransient(error) || signal?.aborted) throw error;
        onRetry?.(error);
        await wakeUps.wait(backoff, signal);
        backoff = Math.min(backoff * 2, pollIntervalMs);
        continue;
      }
      if (!more) await wakeUps.wait(pollIntervalMs, signal);
    }
  } finally {
    await wakeUps.close();
  }
}
