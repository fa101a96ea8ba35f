import type { TransactionSql } from "../connection/connect.ts";

/**
 * Puts claimed rows back in the queue until `waitMs` after they were first queued (a version gap waiting to
 * fill), keeping when that was. In the batch's transaction: they are queued again only if its claim commits.
 */
export async function holdOrders(
  tx: TransactionSql,
  merchantId: string,
  rows: readonly { order_id: string; version: number | null; event_id: string; queued_at: string }[],
  /** How long after its first queueing a row waits. */
  waitMs: number,
): Promise<void> {
  if (rows.length === 0) return;
  await tx`
    insert into sync.order_refresh (merchant_id, order_id, version, event_id, queued_at, not_before)
    select ${merchantId}, r.order_id, r.version, r.event_id, r.queued_at,
           r.queued_at + make_interval(secs => ${waitMs / 1000})
    from unnest(
      ${rows.map((r) => r.order_id)}::text[], ${rows.map((r) => r.version)}::bigint[],
      ${rows.map((r) => r.event_id)}::text[], ${rows.map((r) => r.queued_at)}::timestamptz[]
    ) as r(order_id, version, event_id, queued_at)`;
}
