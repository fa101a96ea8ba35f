import type { Sql, TransactionSql } from "../connection/connect.ts";
import { type QueuedOrder, wakeOrderRefreshers } from "./order-queue.ts";

/**
 * The inbox's enqueue, as a CTE body of its one statement (the receiver's hot path gains no round trip): queues
 * the rows of a CTE named `decided` (id, merchant_id, order_id, order_version, queued) whose `queued` is true,
 * returning merchant_id, so the CTE holding it is named `refreshing` and `wakeOrderRefreshers` follows it.
 */
export function queueInboxOrders(sql: Sql | TransactionSql) {
  return sql`
    insert into sync.order_refresh (merchant_id, order_id, version, event_id)
    select merchant_id, order_id, order_version, id from decided where queued
    returning merchant_id`;
}

/** Appends orders to the merchant's queue and wakes the refreshers (NOTIFY at commit). Used by process_events and by a batch that a 429 stopped. */
export async function queueOrders(
  sql: Sql | TransactionSql,
  merchantId: string,
  orders: readonly QueuedOrder[],
): Promise<void> {
  if (orders.length === 0) return;
  await sql`
    with refreshing as (
      insert into sync.order_refresh (merchant_id, order_id, version, event_id)
      select ${merchantId}, o.order_id, o.version, o.event_id
      from unnest(
        ${orders.map((o) => o.order_id)}::text[],
        ${orders.map((o) => o.version)}::bigint[],
        ${orders.map((o) => o.event_id)}::text[]
      ) as o(order_id, version, event_id)
      returning merchant_id
    )
    ${wakeOrderRefreshers(sql)}`;
}
