import type { Sql, TransactionSql } from "@loops-sync/db";

/** A hot standby's replay, as `status` and `doctor` show it; null on a primary. */
export interface StandbyStatus {
  /**
   * Seconds the standby's data is behind the primary: 0 when it has replayed all the WAL it received, else the
   * age of the last transaction it replayed (so an idle primary does not read as a growing lag).
   */
  replayLagSeconds: number;
  /** The commit time, on the primary, of the last transaction replayed; null before any. */
  lastReplayAt: string | null;
  /** WAL received but not yet replayed, in bytes. */
  replayBehindBytes: number;
  /** Whether a WAL receiver streams from the primary now (false: cut off, or replaying from an archive). */
  streaming: boolean;
}

/** Whether the database is a hot standby and, if so, how far its replay is behind. */
export async function readStandby(sql: Sql | TransactionSql): Promise<StandbyStatus | null> {
  const [row] = await sql<
    { standby: boolean; lag: number | null; last: Date | null; behind: string | null; streaming: boolean }[]
  >`
    select pg_is_in_recovery() as standby,
           case when pg_last_wal_receive_lsn() is not distinct from pg_last_wal_replay_lsn() then 0
                else extract(epoch from clock_timestamp() - pg_last_xact_replay_timestamp())::float8 end as lag,
           pg_last_xact_replay_timestamp() as last,
           coalesce(pg_wal_lsn_diff(pg_last_wal_receive_lsn(), pg_last_wal_replay_lsn()), 0)::text as behind,
           -- A row only while a WAL receiver runs; its columns are hidden from roles without pg_read_all_stats.
           exists (select 1 from pg_stat_wal_receiver) as streaming`;
  if (!row?.standby) return null;
  return {
    replayLagSeconds: Math.max(0, row.lag ?? 0),
    lastReplayAt: row.last ? new Date(row.last).toISOString() : null,
    replayBehindBytes: Math.max(0, Number(row.behind ?? 0)),
    streaming: row.streaming,
  };
}

/** One line for people: "standby (read-only): replay 0.2 s behind the primary, streaming". */
export function describeStandby(s: StandbyStatus): string {
  const lag =
    s.replayLagSeconds < 10 ? s.replayLagSeconds.toFixed(1) : String(Math.round(s.replayLagSeconds));
  return (
    `standby (read-only): replay ${lag} s behind the primary` +
    (s.replayBehindBytes > 0 ? ` (${s.replayBehindBytes} bytes received, not yet replayed)` : "") +
    (s.streaming ? ", streaming" : ", NOT streaming from the primary") +
    `; writing verbs and services run against the primary`
  );
}
