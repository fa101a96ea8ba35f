import { type Sql, settleCoveredOrderEvents, type TransactionSql } from "@loops-sync/db";

export interface ResolveOrderEventsOptions {
  merchantId: string;
  orderId: string;
  /** The version the replica held before this fetch; events at or below it were stale. */
  versionBefore: number | null;
  /** When the fetch started: an event without a version is covered only if it was stored before. */
  receivedBefore: Date;
}

/**
 * Settles the order's events that the replica now covers (pending, or failed earlier and now repaired; the
 * rule: {@link settleCoveredOrderEvents}). Returns how many pending events, stored before the fetch started,
 * still speak of a newer version than the replica holds: the upstream is behind them.
 */
export async function resolveOrderEvents(
  tx: Sql | TransactionSql,
  { merchantId, orderId, versionBefore, receivedBefore }: ResolveOrderEventsOptions,
): Promise<{ settled: number; newerPending: number }> {
  const settled = await settleCoveredOrderEvents(tx, {
    orders: [{ merchantId, orderId, versionBefore, receivedBefore }],
  });
  const [row] = await tx<{ n: number }[]>`
    select count(*)::int as n from sync.events
    where merchant_id = ${merchantId} and order_id = ${orderId} and type like 'order.%' and outcome = 'pending'
      and order_version > coalesce((select version from replica.orders where id = ${orderId}), -1)
      -- Events stored after the fetch started have refresh jobs of their own.
      and received_at <= ${receivedBefore}`;
  return { settled: Object.values(settled).reduce((a, b) => a + b, 0), newerPending: row?.n ?? 0 };
}
