import type { Sql, TransactionSql } from "../connection/connect.ts";

/** pending → failed (with the error) or skipped_revoked: the order's unsettled events, when its fetch was refused. */
export async function settleOrderEvents(
  sql: Sql | TransactionSql,
  merchantId: string,
  orderId: string,
  outcome: "failed" | "skipped_revoked",
  error?: string,
): Promise<void> {
  await sql`
    update sync.events set outcome = ${outcome}, error = ${error ?? null}, outcome_at = now()
    where merchant_id = ${merchantId} and order_id = ${orderId} and type like 'order.%' and outcome = 'pending'`;
}
