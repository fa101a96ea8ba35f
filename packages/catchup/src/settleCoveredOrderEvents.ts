import type { Sql, TransactionSql } from "@loops-sync/db";

/**
 * Settles the given pending order events that the replica already covers (its version is at least the
 * event's; for an event without a version, the replica's copy is at least as recent as the event), in the
 * transaction that stored them, so the worker's process_events finds nothing left to fetch. An event is
 * `applied` when this run's list refresh wrote exactly the version it announces, `stale` otherwise.
 * Returns how many were settled.
 */
export async function settleCoveredOrderEvents(
  tx: Sql | TransactionSql,
  eventIds: readonly string[],
  writtenByThisRun: ReadonlySet<string>,
): Promise<number> {
  if (eventIds.length === 0) return 0;
  const result = await tx`
    update sync.events as e
    set outcome = case
                    when e.order_id = any(${[...writtenByThisRun]}::text[]) and e.order_version = o.version
                    then 'applied' else 'stale' end,
        outcome_at = now(), error = null
    from replica.orders o
    where e.id = any(${[...eventIds]}::text[]) and e.outcome = 'pending' and e.type like 'order.%'
      and o.id = e.order_id and o.merchant_id = e.merchant_id
      and ((e.order_version is not null and o.version >= e.order_version)
           or (e.order_version is null and o.updated_at >= e.created_at))`;
  return result.count;
}
