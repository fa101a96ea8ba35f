import type { Sql, TransactionSql } from "../connection/connect.ts";
import { lowestChangeConsumersNeed, lowestChangeStillNeeded } from "./changes-still-needed.ts";

export interface PruneChangesOptions {
  /** Changes written (`changed_at`) before this time are candidates. */
  before: Date;
  /**
   * A feed consumer's unacknowledged changes written at or after this are kept (RETENTION_DAYS ago); older
   * ones go like any other. Default: `before`.
   */
  retainedBefore?: Date;
  /** Count what would go, delete nothing. */
  dryRun: boolean;
  /** Changes per delete transaction. */
  batchSize: number;
  /** Stops between batches; what was deleted stays deleted. */
  signal?: AbortSignal;
  /** Called after each delete batch (not with dryRun) with how long it took and the running total. */
  afterBatch: (startedAt: number, changesDeleted: number) => Promise<void>;
}

export interface PruneChangesResult {
  /** Changes deleted (or, with dryRun, that would be). */
  changesDeleted: number;
  /** `replica.change_feed_state.pruned_through` afterwards (or, with dryRun, what it would be). */
  prunedThrough: number;
}

/**
 * The old prefix of the feed within the next `limit` positions after `after`: it ends before the first
 * change that is not old enough or that something still needs, so prune never leaves a hole below a
 * retained change. `n` changes, the highest being `last`; `more` when the whole window was old.
 */
interface Keep {
  /** Forwarding's lowest needed position: kept whatever its age. */
  from: number | null;
  /** The consumers' lowest unacknowledged position: kept while written at or after `retainedBefore`. */
  consumersFrom: number | null;
  retainedBefore: Date;
}

async function oldPrefix(
  sql: Sql | TransactionSql,
  after: number,
  before: Date,
  keep: Keep,
  limit: number,
): Promise<{ n: number; last: number | null; more: boolean }> {
  const [row] = await sql<{ n: number; last: number | null }[]>`
    with head as (
      select position, changed_at from replica.changes where position > ${after}::bigint
      order by position limit ${limit}
    ), stop as (
      select min(position) as at from head
      where changed_at >= ${before}::timestamptz or position >= ${keep.from}::bigint
         or (position >= ${keep.consumersFrom}::bigint and changed_at >= ${keep.retainedBefore}::timestamptz)
    )
    select count(*) filter (where stop.at is null or position < stop.at)::int as n,
           max(position) filter (where stop.at is null or position < stop.at) as last
    from head, stop`;
  const n = row?.n ?? 0;
  return { n, last: row?.last ?? null, more: n === limit };
}

/**
 * Deletes the changes older than `before` from the start of `replica.changes`, in keyset batches by position,
 * and in each batch's own transaction advances `replica.change_feed_state.pruned_through` to the highest
 * position it removed, so `read_changes` raises `changes_expired` for a cursor below it rather than returning
 * a silent gap. Only a prefix goes: it stops at the first change that is newer, that
 * `lowestChangeStillNeeded` keeps, or that a feed consumer has not acknowledged and is younger than
 * `retainedBefore`. The state row is locked per batch, so two prunes take turns; writers and
 * readers never wait on it (writers do not touch it, readers read it without a lock).
 */
export async function pruneChanges(
  sql: Sql,
  { before, retainedBefore = before, dryRun, batchSize, signal, afterBatch }: PruneChangesOptions,
): Promise<PruneChangesResult> {
  const keepFrom: Keep = {
    from: await lowestChangeStillNeeded(sql),
    consumersFrom: await lowestChangeConsumersNeed(sql),
    retainedBefore,
  };
  const [state] = await sql<{ pruned: number }[]>`
    select pruned_through as pruned from replica.change_feed_state`;
  const result: PruneChangesResult = { changesDeleted: 0, prunedThrough: state?.pruned ?? 0 };
  if (dryRun) {
    // The same walk, deleting nothing: reads `batchSize` positions at a time through the primary key.
    for (let more = true; more; ) {
      signal?.throwIfAborted();
      const prefix = await oldPrefix(sql, result.prunedThrough, before, keepFrom, batchSize);
      if (prefix.last === null) break;
      result.changesDeleted += prefix.n;
      result.prunedThrough = prefix.last;
      more = prefix.more;
    }
    return result;
  }
  for (let more = true; more; ) {
    signal?.throwIfAborted();
    const startedAt = performance.now();
    const batch = await sql.begin(async (tx) => {
      const [locked] = await tx<{ pruned: number }[]>`
        select pruned_through as pruned from replica.change_feed_state for update`;
      const pruned = locked?.pruned ?? 0;
      const prefix = await oldPrefix(tx, pruned, before, keepFrom, batchSize);
      if (prefix.last === null) return { ...prefix, pruned };
      await tx`delete from replica.changes where position > ${pruned}::bigint and position <= ${prefix.last}::bigint`;
      await tx`update replica.change_feed_state set pruned_through = ${prefix.last}::bigint`;
      return { ...prefix, pruned: prefix.last };
    });
    result.prunedThrough = batch.pruned;
    if (batch.last === null) break;
    result.changesDeleted += batch.n;
    more = batch.more;
    await afterBatch(startedAt, result.changesDeleted);
  }
  return result;
}
