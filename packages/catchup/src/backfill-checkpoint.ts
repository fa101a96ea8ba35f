import type { Sql, TransactionSql } from "@loops-sync/db";

/** A merchant's row of sync.backfills. */
export interface BackfillCheckpoint {
  watermark: Date | null;
  lastCompletedAt: Date | null;
  /** The run in progress, when one was interrupted. */
  run:
    | {
        startedAt: Date;
        since: Date | null;
        nextWatermark: Date | null;
        pageCursor: string | null;
        pages: number;
        ordersSeen: number;
        ordersChanged: number;
      }
    | undefined;
}

interface Row {
  watermark: Date | null;
  last_completed_at: Date | null;
  run_started_at: Date | null;
  run_since: Date | null;
  run_next_watermark: Date | null;
  run_page_cursor: string | null;
  run_pages: number;
  run_orders_seen: string;
  run_orders_changed: string;
}

export async function readBackfillCheckpoint(
  sql: Sql | TransactionSql,
  merchantId: string,
): Promise<BackfillCheckpoint | undefined> {
  const [row] = await sql<Row[]>`select * from sync.backfills where merchant_id = ${merchantId}`;
  if (!row) return undefined;
  return {
    watermark: row.watermark,
    lastCompletedAt: row.last_completed_at,
    run: row.run_started_at
      ? {
          startedAt: row.run_started_at,
          since: row.run_since,
          nextWatermark: row.run_next_watermark,
          pageCursor: row.run_page_cursor,
          pages: row.run_pages,
          ordersSeen: Number(row.run_orders_seen),
          ordersChanged: Number(row.run_orders_changed),
        }
      : undefined,
  };
}

/** Starts a run from its first page (replacing any interrupted one). */
export async function startBackfillRun(sql: Sql, merchantId: string, since: Date | null): Promise<void> {
  await sql`
    insert into sync.backfills as b (merchant_id, run_started_at, run_since, last_run_status)
    values (${merchantId}, now(), ${since}, 'running')
    on conflict (merchant_id) do update
      set run_started_at = now(), run_since = excluded.run_since, run_next_watermark = null,
          run_page_cursor = null, run_pages = 0, run_orders_seen = 0, run_orders_changed = 0,
          last_run_status = 'running', last_run_error = null, updated_at = now()`;
}

/** Moves the checkpoint past an applied page, in the transaction that applied it. */
export async function advanceBackfillRun(
  tx: TransactionSql,
  merchantId: string,
  page: { nextCursor: string | null; nextWatermark: Date | null; seen: number; changed: number },
): Promise<void> {
  await tx`
    update sync.backfills
    set run_page_cursor = ${page.nextCursor},
        run_next_watermark = coalesce(run_next_watermark, ${page.nextWatermark}::timestamptz),
        run_pages = run_pages + 1, run_orders_seen = run_orders_seen + ${page.seen},
        run_orders_changed = run_orders_changed + ${page.changed}, updated_at = now()
    where merchant_id = ${merchantId}`;
}

/**
 * Completes the run: its watermark becomes the next run's updated_since. When the first page was empty
 * (nothing changed since `since`), the old starting point stays.
 */
export async function completeBackfillRun(sql: Sql, merchantId: string): Promise<Date | null> {
  const [row] = await sql<{ watermark: Date | null }[]>`
    update sync.backfills
    set watermark = coalesce(run_next_watermark, run_since), last_completed_at = now(),
        run_started_at = null, run_since = null, run_next_watermark = null, run_page_cursor = null,
        last_run_status = 'ok', last_run_error = null, updated_at = now()
    where merchant_id = ${merchantId}
    returning watermark`;
  return row?.watermark ?? null;
}

/** Records a failure; the checkpoint stays so the next run resumes at the page after the last applied one. */
export async function failBackfillRun(sql: Sql, merchantId: string, error: string): Promise<void> {
  await sql`
    update sync.backfills set last_run_status = 'failed', last_run_error = ${error}, updated_at = now()
    where merchant_id = ${merchantId}`;
}
