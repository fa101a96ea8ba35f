import type { PendingQuery, Row } from "postgres";
import type { Sql, TransactionSql } from "../connection/connect.ts";

/**
 * (stored) → pending, or ignored_self when this application's own write caused the event: the outcome
 * columns of the inbox's insert into sync.events, and their values read from the inserted rows'
 * `origin_application_id`. Fragments, because the inbox stores and queues in ONE statement.
 */
export function storedOutcome(
  sql: Sql | TransactionSql,
  applicationId: string | null,
): { columns: PendingQuery<Row[]>; values: PendingQuery<Row[]> } {
  return {
    columns: sql`outcome, outcome_at`,
    values: sql`
      case when origin_application_id = ${applicationId}::text then 'ignored_self' else 'pending' end,
      case when origin_application_id = ${applicationId}::text then now() end`,
  };
}
