import type { Sql, TransactionSql } from "../connection/connect.ts";

/**
 * pending → skipped_revoked: every pending event of a revoked merchant (but the revocation itself, which
 * its own job settles). No more calls will be made for it, so nothing else would ever answer them.
 */
export async function skipRevokedMerchantEvents(
  sql: Sql | TransactionSql,
  merchantId: string,
): Promise<void> {
  await sql`
    update sync.events set outcome = 'skipped_revoked', outcome_at = now()
    where merchant_id = ${merchantId} and outcome = 'pending' and type <> 'connection.revoked'`;
}

/** pending → unhandled: every pending event of a merchant Loops does not know, with why. */
export async function settleUnknownMerchantEvents(
  sql: Sql | TransactionSql,
  merchantId: string,
  why: string,
): Promise<void> {
  await sql`
    update sync.events set outcome = 'unhandled', error = ${`merchant unknown to Loops: ${why}`},
           outcome_at = now()
    where merchant_id = ${merchantId} and outcome = 'pending'`;
}
