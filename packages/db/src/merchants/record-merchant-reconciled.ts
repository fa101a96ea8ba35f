import type { Sql, TransactionSql } from "../connection/connect.ts";

/**
 * Records that a complete reconcile of the merchant ended now, and what it cost (requests to Loops): the
 * trickle schedules its next run from this (apps/worker/src/reconcile/reconcile-schedule.ts), and a process
 * start reconciles no merchant whose run is recent. Shared by every process; its status stays.
 */
export async function recordMerchantReconciled(
  sql: Sql | TransactionSql,
  merchantId: string,
  apiCalls: number,
): Promise<void> {
  await sql`
    update sync.merchants set reconciled_at = clock_timestamp(), reconcile_calls = ${apiCalls}
    where id = ${merchantId}`;
}
