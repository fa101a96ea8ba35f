import type { Sql, TransactionSql } from "@loops-sync/db";

/** A merchant's position in GET /events (a row of sync.cursors). */
export interface EventCursor {
  merchantId: string;
  /** The last event stored by catch-up; null: start at the oldest retained event. */
  afterEventId: string | null;
  afterCreatedAt: Date | null;
  eventsStored: number;
  lastRunStatus: string | null;
}

/** The merchant's cursor, or undefined when catch-up never ran for it. */
export async function readEventCursor(
  sql: Sql | TransactionSql,
  merchantId: string,
): Promise<EventCursor | undefined> {
  const [row] = await sql<
    {
      after_event_id: string | null;
      after_created_at: Date | null;
      events_stored: string;
      last_run_status: string | null;
    }[]
  >`
    select after_event_id, after_created_at, events_stored, last_run_status
    from sync.cursors where merchant_id = ${merchantId}`;
  if (!row) return undefined;
  return {
    merchantId,
    afterEventId: row.after_event_id,
    afterCreatedAt: row.after_created_at,
    eventsStored: Number(row.events_stored),
    lastRunStatus: row.last_run_status,
  };
}

/** Records that a run started (creating the cursor row at "the oldest retained event" if new). */
export async function startCursorRun(sql: Sql, merchantId: string): Promise<void> {
  await sql`
    insert into sync.cursors (merchant_id, last_run_started_at, last_run_status, last_run_error)
    values (${merchantId}, now(), 'running', null)
    on conflict (merchant_id) do update
      set last_run_started_at = now(), last_run_status = 'running', last_run_error = null, updated_at = now()`;
}

/**
 * Moves the cursor past a stored page. Runs in the transaction that stored the page, so the position and
 * the events it covers commit together: a crash before commit re-reads the page, after it skips it.
 */
export async function advanceEventCursor(
  tx: TransactionSql,
  merchantId: string,
  last: { id: string; created_at: string },
  stored: number,
): Promise<void> {
  // Two runs at once (the cron and an operator) must not move the cursor back: only forward in event time.
  const forward = tx`(sync.cursors.after_created_at is null or excluded.after_created_at >= sync.cursors.after_created_at)`;
  await tx`
    insert into sync.cursors (merchant_id, after_event_id, after_created_at, events_stored, updated_at)
    values (${merchantId}, ${last.id}, ${last.created_at}::timestamptz, ${stored}, now())
    on conflict (merchant_id) do update
      set after_event_id = case when ${forward} then excluded.after_event_id else sync.cursors.after_event_id end,
          after_created_at = case when ${forward} then excluded.after_created_at else sync.cursors.after_created_at end,
          events_stored = sync.cursors.events_stored + excluded.events_stored, updated_at = now()`;
}

/** Resets the position to the oldest retained event (after the upstream refused the old one). */
export async function resetEventCursor(sql: Sql, merchantId: string): Promise<void> {
  await sql`
    update sync.cursors set after_event_id = null, after_created_at = null, updated_at = now()
    where merchant_id = ${merchantId}`;
}

/** Records how a run ended: `ok`, `cursor_expired`, `revoked` or `failed` (with the error, secrets never included). */
export async function finishCursorRun(
  sql: Sql,
  merchantId: string,
  status: "ok" | "cursor_expired" | "revoked" | "paused" | "failed",
  error?: string,
): Promise<void> {
  await sql`
    update sync.cursors
    set last_run_finished_at = now(), last_run_status = ${status}, last_run_error = ${error ?? null},
        updated_at = now()
    where merchant_id = ${merchantId}`;
}
