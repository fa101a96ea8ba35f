import type postgres from "postgres";

/** Fastest state poll, right after the standby replayed something: a burst is followed closely. */
export const REPLAY_POLL_MIN_MS = 100;
/**
 * Slowest state poll, reached after about a second without replay: what an idle standby costs a follower
 * (60 polls a minute of `pg_last_xact_replay_timestamp()`, no table read), and the most a change waits after its
 * replay.
 */
export const REPLAY_POLL_MAX_MS = 1000;

export interface ReplayWatch {
  /** Stops polling; resolves once no poll is in flight. */
  unlisten(): Promise<void>;
}

/**
 * True when `sql` reaches a hot standby (a server in recovery): LISTEN fails there and nothing writes.
 * Unprepared, so it also runs behind a pooler in transaction mode.
 */
export async function isStandby(
  // biome-ignore lint/suspicious/noExplicitAny: any postgres.js handle
  sql: postgres.Sql<any>,
): Promise<boolean> {
  const [row] = await sql.unsafe("select pg_is_in_recovery() as standby");
  return row?.standby === true;
}

/**
 * The standby's stand-in for `LISTEN`, which a standby refuses and whose notifications are not replayed: polls
 * the commit time of the last transaction the standby replayed and calls `ring` when it changed (and once at
 * the start). Every change of the feed comes in a commit; WAL without one (checkpoints, vacuum, the primary's
 * snapshots every 15 s) rings nothing, so an idle primary costs no reads. Two commits of the same microsecond
 * would ring once for both only if a poll fell between their replays; the caller's fallback read
 * (`pollIntervalMs`) covers that. The poll starts every {@link REPLAY_POLL_MIN_MS} and doubles while nothing is
 * replayed, up to
 * {@link REPLAY_POLL_MAX_MS}; any replay brings it back to the fastest. A failed poll (a lost connection) is
 * only retried: the caller's own reads report errors.
 */
export function watchReplay(
  // biome-ignore lint/suspicious/noExplicitAny: any postgres.js pool
  sql: postgres.Sql<any>,
  ring: () => void,
  { onPoll }: { onPoll?: () => void } = {},
): ReplayWatch {
  let last: string | null | undefined;
  let delay = REPLAY_POLL_MIN_MS;
  let stopped = false;
  let timer: ReturnType<typeof setTimeout> | undefined;
  let inFlight: Promise<void> = Promise.resolve();
  const poll = async () => {
    onPoll?.();
    try {
      const [row] = await sql.unsafe("select pg_last_xact_replay_timestamp()::text as replayed");
      const replayed = (row?.replayed as string | null) ?? null;
      if (replayed !== last) {
        last = replayed;
        delay = REPLAY_POLL_MIN_MS;
        ring();
        return;
      }
    } catch {
      // The follower's next read meets the same connection trouble and reports it.
    }
    delay = Math.min(delay * 2, REPLAY_POLL_MAX_MS);
  };
  const schedule = () => {
    if (stopped) return;
    timer = setTimeout(() => {
      inFlight = poll().finally(schedule);
    }, delay);
  };
  inFlight = poll().finally(schedule);
  return {
    async unlisten() {
      stopped = true;
      clearTimeout(timer);
      await inFlight;
    },
  };
}
