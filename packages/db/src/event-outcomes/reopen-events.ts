import type { Sql, TransactionSql } from "../connection/connect.ts";

/**
 * any → pending: the events are answered again (the caller queues their process_events job in the same
 * transaction). What `replay` and `replay --failed` do; the error and the time of the old outcome go.
 */
export async function reopenEvents(sql: Sql | TransactionSql, ids: readonly string[]): Promise<void> {
  if (ids.length === 0) return;
  await sql`
    update sync.events set outcome = 'pending', error = null, outcome_at = null
    where id = any(${ids as string[]}::text[])`;
}
