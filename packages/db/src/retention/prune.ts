import { setTimeout as delay } from "node:timers/promises";
import { pruneChanges } from "../change-feed/prune-changes.ts";
import type { Sql } from "../connection/connect.ts";
import { TERMINAL_OUTCOMES } from "../event-outcomes/event-outcomes.ts";

export interface PruneOptions {
  sql: Sql;
  /**
   * Rows received (events), last touched (jobs), written (changes) or refused (refused events) before this
   * time are candidates.
   */
  before: Date;
  /**
   * RETENTION_DAYS ago: a feed consumer's unacknowledged changes written at or after this are kept even when
   * older than `before`. Default: `before`.
   */
  retainedBefore?: Date;
  /** Count what would go, delete nothing. Default: false. */
  dryRun?: boolean;
  /** Rows per delete transaction. Default: 1000. */
  batchSize?: number;
  /**
   * After each batch, rest this many times as long as the batch took, so that the receiver and the worker
   * keep the CPU and the disk most of the time (a webhook's ack is never queued behind a run of deletes).
   * Default: 1 (the prune is busy at most half the time). 0: no rest.
   */
  restRatio?: number;
  /** Stops between batches; what was deleted stays deleted. Default: none. */
  signal?: AbortSignal;
  /** Called after each batch with the running totals. Default: none. */
  onBatch?: (progress: {
    eventsDeleted: number;
    jobsDeleted: number;
    changesDeleted: number;
    refusedEventsDeleted: number;
  }) => void;
}

export interface PruneResult {
  /** ISO 8601: rows older than this were candidates. */
  before: string;
  dryRun: boolean;
  /** Events deleted (or, with dryRun, that would be). */
  eventsDeleted: number;
  /** Terminal events older than the cutoff kept because status or reporting still reads them. */
  eventsKept: number;
  /** Failed jobs (all attempts used) deleted (or that would be). */
  jobsDeleted: number;
  /** Changes of replica.changes deleted (or that would be): the oldest, never one forwarding still needs
   * nor one a feed consumer has not acknowledged while younger than `retainedBefore`. */
  changesDeleted: number;
  /**
   * replica.change_feed_state.pruned_through afterwards (or, with dryRun, what it would be): read_changes
   * raises changes_expired for a cursor below it.
   */
  changesPrunedThrough: number;
  /** Unstorable events (sync.refused_events), refused before the cutoff: deleted (or would be). */
  refusedEventsDeleted: number;
  batches: number;
}

/**
 * Events a cursor or a reporting view still reads, whatever their age: each cursor's `after_event_id`,
 * each queued order refresh's event, and per merchant the newest applied event (`reporting.sync_health`'s
 * lag) and the newest webhook (its "last webhook").
 */
async function eventsStillNeeded(sql: Sql): Promise<string[]> {
  const rows = await sql<{ id: string }[]>`
    with merchants as (select id from sync.merchants union select merchant_id from sync.cursors)
    select after_event_id as id from sync.cursors where after_event_id is not null
    union select event_id from sync.order_refresh where event_id is not null
    union select (select e.id from sync.events e where e.merchant_id = m.id and e.outcome = 'applied'
                  order by e.created_at desc limit 1) from merchants m
    union select (select e.id from sync.events e where e.merchant_id = m.id and e.source = 'webhook'
                  order by e.received_at desc limit 1) from merchants m`;
  return rows.map((r) => r.id).filter((id) => id !== null);
}

/**
 * Deletes terminal events received before `before`, graphile-worker jobs that used all their attempts
 * and were last touched before it, and the events catch-up refused to store (sync.refused_events) recorded
 * before it, in small batches, each its own short transaction. Rows another transaction holds are skipped
 * (SKIP LOCKED), so the receiver and the worker never wait on a prune; pending and failed events are never
 * candidates. Then the change feed's oldest changes, written before
 * `before` (`pruneChanges`: a prefix of positions, advancing `pruned_through` with each batch).
 */
export async function pruneFinished({
  sql,
  before,
  retainedBefore,
  dryRun = false,
  batchSize = 1000,
  restRatio = 1,
  signal,
  onBatch,
}: PruneOptions): Promise<PruneResult> {
  if (!Number.isInteger(batchSize) || batchSize < 1) {
    throw new RangeError(`pruneFinished: batchSize must be a whole number of at least 1, got ${batchSize}`);
  }
  const keep = await eventsStillNeeded(sql);
  const terminal = [...TERMINAL_OUTCOMES];
  const [kept] = await sql<{ n: number }[]>`
    select count(*)::int as n from sync.events
    where id = any(${keep}::text[]) and received_at < ${before} and outcome = any(${terminal}::text[])`;
  const result: PruneResult = {
    before: before.toISOString(),
    dryRun,
    eventsDeleted: 0,
    eventsKept: kept?.n ?? 0,
    jobsDeleted: 0,
    changesDeleted: 0,
    changesPrunedThrough: 0,
    refusedEventsDeleted: 0,
    batches: 0,
  };
  if (dryRun) {
    const [counts] = await sql<{ events: number; jobs: number; refused: number }[]>`
      select (select count(*)::int from sync.events
              where received_at < ${before} and outcome = any(${terminal}::text[])
                and not (id = any(${keep}::text[]))) as events,
             (select count(*)::int from graphile_worker._private_jobs
              where attempts >= max_attempts and locked_at is null and updated_at < ${before}) as jobs,
             (select count(*)::int from sync.refused_events where refused_at < ${before}) as refused`;
    const changes = await pruneChanges(sql, {
      before,
      retainedBefore,
      dryRun,
      batchSize,
      signal,
      afterBatch: async () => {},
    });
    return {
      ...result,
      eventsDeleted: counts?.events ?? 0,
      jobsDeleted: counts?.jobs ?? 0,
      refusedEventsDeleted: counts?.refused ?? 0,
      changesDeleted: changes.changesDeleted,
      changesPrunedThrough: changes.prunedThrough,
    };
  }
  // Walk forward through received_at so each batch starts where the last ended, not over the dead rows
  // the earlier batches left in the index.
  // received_at travels as text: a JS Date would drop its microseconds and revisit rows.
  let after = { at: "-infinity", id: "" };
  const rest = async (startedAt: number) => {
    if (restRatio > 0) await delay((performance.now() - startedAt) * restRatio);
  };
  const progress = () => ({
    eventsDeleted: result.eventsDeleted,
    jobsDeleted: result.jobsDeleted,
    changesDeleted: result.changesDeleted,
    refusedEventsDeleted: result.refusedEventsDeleted,
  });
  for (;;) {
    signal?.throwIfAborted();
    const startedAt = performance.now();
    const [batch] = await sql<{ n: number; at: string | null; id: string | null }[]>`
      with batch as (
        select id, received_at from sync.events
        where received_at < ${before} and (received_at, id) > (${after.at}::text::timestamptz, ${after.id}::text)
          and outcome = any(${terminal}::text[]) and not (id = any(${keep}::text[]))
        order by received_at, id
        limit ${batchSize}
        for update skip locked
      ), gone as (
        delete from sync.events e using batch b where e.id = b.id
        returning e.id, e.received_at
      )
      select count(*)::int as n,
             (select received_at::text from gone order by received_at desc, id desc limit 1) as at,
             (select id from gone order by received_at desc, id desc limit 1) as id
      from gone`;
    if (!batch || batch.n === 0 || !batch.at || !batch.id) break;
    after = { at: batch.at, id: batch.id };
    result.eventsDeleted += batch.n;
    result.batches++;
    onBatch?.(progress());
    await rest(startedAt);
  }
  /** Runs `deleteBatch` (it answers how many rows it deleted) until it deletes none, resting between. */
  const inBatches = async (
    counter: "jobsDeleted" | "refusedEventsDeleted",
    deleteBatch: () => Promise<{ n: number }[]>,
  ) => {
    for (;;) {
      signal?.throwIfAborted();
      const startedAt = performance.now();
      const [batch] = await deleteBatch();
      if (!batch || batch.n === 0) return;
      result[counter] += batch.n;
      result.batches++;
      onBatch?.(progress());
      await rest(startedAt);
    }
  };
  await inBatches(
    "jobsDeleted",
    () => sql<{ n: number }[]>`
      with batch as (
        select id from graphile_worker._private_jobs
        where attempts >= max_attempts and locked_at is null and updated_at < ${before}
        order by id limit ${batchSize}
        for update skip locked
      ), gone as (
        delete from graphile_worker._private_jobs j using batch b where j.id = b.id returning j.id
      )
      select count(*)::int as n from gone`,
  );
  await inBatches(
    "refusedEventsDeleted",
    () => sql<{ n: number }[]>`
      with batch as (
        select id from sync.refused_events where refused_at < ${before}
        order by id limit ${batchSize}
        for update skip locked
      ), gone as (
        delete from sync.refused_events r using batch b where r.id = b.id returning r.id
      )
      select count(*)::int as n from gone`,
  );
  const changes = await pruneChanges(sql, {
    before,
    retainedBefore,
    dryRun,
    batchSize,
    signal,
    afterBatch: async (startedAt, changesDeleted) => {
      result.changesDeleted = changesDeleted;
      result.batches++;
      onBatch?.(progress());
      await rest(startedAt);
    },
  });
  result.changesDeleted = changes.changesDeleted;
  result.changesPrunedThrough = changes.prunedThrough;
  return result;
}
