import type { Sql, TransactionSql } from "../connection/connect.ts";

/**
 * `sync.order_refresh`: orders waiting for a fetch by the worker's order refresher (migrations 0007, 0008,
 * 0019). One row per queued event. Only the functions of this folder write the table or name its NOTIFY
 * channel (a workspace test holds the rest of the tree to it); each is one transition:
 *
 * | from               | to                                  | function                 | who                          |
 * | ------------------ | ----------------------------------- | ------------------------ | ---------------------------- |
 * | (an order event)   | queued, NOTIFY at commit            | `queueInboxOrders` (CTE) | the inbox's one statement    |
 * | (an order event)   | queued, NOTIFY at commit            | `queueOrders`            | process_events, a 429'd batch |
 * | queued (due)       | claimed: deleted in the batch's tx  | `claimQueuedOrders`      | an order batch (claim, join) |
 * | claimed            | queued again, due after `not_before`| `holdOrders`             | a batch waiting on a gap     |
 * | queued             | dropped                             | `dropQueuedOrders`       | a revocation                 |
 *
 * A claim is a delete inside the batch's transaction: a crash rolls it back and the rows are queued again.
 */
export interface QueuedOrder {
  order_id: string;
  /** The version its event announced; null when it did not say. */
  version: number | null;
  event_id: string;
}

/**
 * The NOTIFY channel that says "orders were queued in sync.order_refresh" (the worker's order refresher
 * listens). The payload names the merchants, as a JSON array, so a refresher starts their batches without
 * reading the queue; an empty payload (too many merchants for one NOTIFY) means "read the queue".
 */
export const ORDER_REFRESH_CHANNEL = "loops_sync_order_refresh";

/** Longest merchant list sent in a NOTIFY payload (Postgres refuses payloads of 8,000 bytes and more). */
const MAX_NOTIFY_PAYLOAD = 7000;

/**
 * A CTE body that wakes the order refreshers for the rows of a CTE named `refreshing` (merchant_id) of the
 * same statement: one NOTIFY naming the distinct merchants, none when no row was queued. The NOTIFY is
 * delivered at commit.
 */
export function wakeOrderRefreshers(sql: Sql | TransactionSql) {
  return sql`
    select pg_notify(${ORDER_REFRESH_CHANNEL},
                     case when length(merchants) <= ${MAX_NOTIFY_PAYLOAD} then merchants else '' end)
    from (select json_agg(distinct merchant_id)::text as merchants from refreshing) as named
    where merchants is not null`;
}
