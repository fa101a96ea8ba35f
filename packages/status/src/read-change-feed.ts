import type { Sql, TransactionSql } from "@loops-sync/db";

/** Below this many positions between the oldest and the head, the feed's rows are counted exactly. */
const EXACT_COUNT_SPAN = 50_000;

/** The change feed (`replica.changes`) as the operator sees it: where readers are, what retention kept. */
export interface ChangeFeedStatus {
  /** The highest committed position (what a caught-up reader has read), or null when the feed is empty. */
  headPosition: number | null;
  /** When the head change was written, ISO 8601 UTC, or null when the feed is empty. */
  headChangedAt: string | null;
  /** The lowest position still in the table, or null when the feed is empty. */
  oldestPosition: number | null;
  /** What prune removed: `read_changes` raises `changes_expired` for a cursor below this. */
  prunedThrough: number;
  /**
   * Rows in the feed: counted exactly when the feed spans at most 50,000 positions, otherwise the planner's
   * estimate (pg_class.reltuples, refreshed by autovacuum/ANALYZE); null before any estimate.
   */
  rows: number | null;
  /** True when `rows` was counted, false when it is the estimate. */
  rowsExact: boolean;
  /** Heap, indexes and TOAST, in bytes (pg_total_relation_size). */
  totalBytes: number;
}

/**
 * The feed's head, oldest retained position, pruned_through and size, read without scanning the table: min
 * and max come from the primary key, the size from the catalog, and rows are counted only when few.
 */
export async function readChangeFeed(sql: Sql | TransactionSql): Promise<ChangeFeedStatus> {
  const [row] = await sql<
    {
      head: number | null;
      head_at: Date | null;
      oldest: number | null;
      pruned: number;
      estimate: number;
      bytes: string;
    }[]
  >`
    with head as (select position, changed_at from replica.changes order by position desc limit 1),
         state as (select pruned_through from replica.change_feed_state)
    select (select position from head) as head, (select changed_at from head) as head_at,
           -- Prune removes a prefix: starting above it skips the index entries of rows it deleted that
           -- vacuum has not cleared yet (a min() from the start would walk them all).
           (select min(position) from replica.changes where position > (select pruned_through from state)) as oldest,
           (select pruned_through from state) as pruned,
           c.reltuples::float8 as estimate, pg_total_relation_size(c.oid)::text as bytes
    from pg_class c where c.oid = 'replica.changes'::regclass`;
  const r = row!;
  let rows = r.estimate < 0 ? null : Math.round(r.estimate);
  let rowsExact = false;
  if (r.head === null || r.oldest === null) {
    rows = 0;
    rowsExact = true;
  } else if (r.head - r.oldest < EXACT_COUNT_SPAN) {
    const [counted] = await sql<{ n: number }[]>`
      select count(*)::int as n from replica.changes where position between ${r.oldest} and ${r.head}`;
    rows = counted!.n;
    rowsExact = true;
  }
  return {
    headPosition: r.head,
    headChangedAt: r.head_at?.toISOString() ?? null,
    oldestPosition: r.oldest,
    prunedThrough: r.pruned ?? 0,
    rows,
    rowsExact,
    totalBytes: Number(r.bytes),
  };
}
