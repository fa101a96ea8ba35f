import type { Sql, TransactionSql } from "@loops-sync/db";
import type { UnhandledEventType } from "./sync-status.ts";

/**
 * Events stored as `unhandled` (a type loops-sync does not act on, or one it could not, such as an event of a
 * merchant Loops does not know), counted by type over what retention keeps, most frequent first.
 */
export async function readUnhandledEvents(sql: Sql | TransactionSql): Promise<UnhandledEventType[]> {
  const rows = await sql<{ type: string; count: number; last_received_at: Date }[]>`
    select type, count(*)::int as count, max(received_at) as last_received_at
    from sync.events where outcome = 'unhandled'
    group by type order by count(*) desc, type
    limit 50`;
  return rows.map((r) => ({
    type: r.type,
    count: r.count,
    lastReceivedAt: r.last_received_at.toISOString(),
  }));
}
