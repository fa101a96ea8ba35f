import type { Sql, TransactionSql } from "../connection/connect.ts";

/**
 * Drops the merchant's queued order refreshes (a revocation: no more calls will be made for it). Waits for the
 * merchant's running order batches, whose claims hold row locks on the rows they took.
 */
export async function dropQueuedOrders(sql: Sql | TransactionSql, merchantId: string): Promise<void> {
  await sql`delete from sync.order_refresh where merchant_id = ${merchantId}`;
}
