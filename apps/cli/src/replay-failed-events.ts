import { PROCESS_EVENTS_MAX_ATTEMPTS, reopenEvents, type Sql } from "@loops-sync/db";
import { enqueueJob } from "@loops-sync/replica";

/** Which failed events `replay --failed` takes. */
export interface FailedEventFilter {
  merchantId?: string | undefined;
  /** An event type (`order.updated`), or a family of them (`order.*`). */
  type?: string | undefined;
  /** Only events received at or after this ISO time. */
  since?: string | undefined;
}

export interface FailedEvent {
  id: string;
  type: string;
  merchantId: string;
  receivedAt: string;
  error: string | null;
}

export interface ReplayProgress {
  replayed: number;
  total: number;
}

export interface ReplayFailedOptions {
  /** Events put back per transaction (one process_events job each). Default: 200. */
  batchSize?: number;
  /** Called after each committed batch. Default: none. */
  onBatch?: (progress: ReplayProgress) => void;
}

export interface ReplayFailedResult {
  replayed: number;
  batches: number;
  byType: Record<string, number>;
}

/** The filter as SQL conditions on `sync.events e` (only failed events). */
function matching(sql: Sql, { merchantId, type, since }: FailedEventFilter) {
  const family = type?.endsWith(".*") ? `${type.slice(0, -1)}%` : undefined;
  return sql`
    e.outcome = 'failed'
    ${merchantId ? sql`and e.merchant_id = ${merchantId}` : sql``}
    ${family ? sql`and e.type like ${family}` : type ? sql`and e.type = ${type}` : sql``}
    ${since ? sql`and e.received_at >= ${since}::timestamptz` : sql``}`;
}

/** The failed events `filter` takes, oldest first (what `--dry-run` lists). */
export async function listFailedEvents(sql: Sql, filter: FailedEventFilter): Promise<FailedEvent[]> {
  const rows = await sql<
    { id: string; type: string; merchant_id: string; received_at: Date; error: string | null }[]
  >`
    select e.id, e.type, e.merchant_id, e.received_at, e.error from sync.events e
    where ${matching(sql, filter)} order by e.received_at, e.id`;
  return rows.map((r) => ({
    id: r.id,
    type: r.type,
    merchantId: r.merchant_id,
    receivedAt: r.received_at.toISOString(),
    error: r.error,
  }));
}

/**
 * Puts every failed event `filter` takes back to `pending` with a process_events job, as `replay EVENT_ID`
 * does one, in small transactions (oldest first, by received_at then id), so a large mend neither holds
 * long locks nor loses what it did on an interrupt. Each batch moves on from where the last one ended: an
 * event the worker fails again meanwhile is not taken twice.
 */
export async function replayFailedEvents(
  sql: Sql,
  filter: FailedEventFilter,
  { batchSize = 200, onBatch }: ReplayFailedOptions = {},
): Promise<ReplayFailedResult> {
  const [{ total } = { total: 0 }] = await sql<{ total: number }[]>`
    select count(*)::int as total from sync.events e where ${matching(sql, filter)}`;
  const result: ReplayFailedResult = { replayed: 0, batches: 0, byType: {} };
  // The keyset as Postgres wrote it: received_at in microseconds, which a Date would round.
  let after: { receivedAt: string; id: string } | undefined;
  for (;;) {
    const batch = await sql.begin(async (tx) => {
      const rows = await tx<{ id: string; type: string; key: string; last: boolean }[]>`
        with picked as (
          select e.id, e.type, e.received_at from sync.events e
          where ${matching(sql, filter)}
            ${after ? sql`and (e.received_at, e.id) > (${after.receivedAt}::timestamptz, ${after.id})` : sql``}
          order by e.received_at, e.id limit ${batchSize} for update skip locked
        )
        select id, type, to_char(received_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') as key,
               row_number() over (order by received_at desc, id desc) = 1 as last
        from picked`;
      if (rows.length > 0) {
        const eventIds = rows.map((r) => r.id).sort();
        await reopenEvents(tx, eventIds);
        await enqueueJob(tx, {
          task: "process_events",
          payload: { eventIds },
          maxAttempts: PROCESS_EVENTS_MAX_ATTEMPTS,
        });
      }
      return rows;
    });
    if (batch.length === 0) return result;
    const last = batch.find((r) => r.last)!;
    after = { receivedAt: last.key, id: last.id };
    result.replayed += batch.length;
    result.batches++;
    for (const r of batch) result.byType[r.type] = (result.byType[r.type] ?? 0) + 1;
    onBatch?.({ replayed: result.replayed, total: Math.max(total, result.replayed) });
  }
}
