import type { TransactionSql } from "../connection/connect.ts";
import type { MerchantStatus } from "./merchants.ts";

/** What `confirmMerchant` moved. */
export interface ConfirmedMerchant {
  /** It was revoked before (a reconnect being confirmed): events of that time were skipped. */
  wasRevoked: boolean;
}

/**
 * unconfirmed → active: GET /connection answered for the merchant with `connectionId`, active. Locks the
 * merchant's row for the rest of the transaction first; a merchant no longer unconfirmed (another
 * confirmation came first) is left as it is, and null comes back.
 */
export async function confirmMerchant(
  tx: TransactionSql,
  merchantId: string,
  connectionId: string,
): Promise<ConfirmedMerchant | null> {
  const [before] = await tx<{ status: string; revoked_at: Date | null }[]>`
    select status, revoked_at from sync.merchants where id = ${merchantId} for update`;
  if (before?.status !== "unconfirmed") return null;
  await tx`
    update sync.merchants
    set status = 'active', confirm_error = null, connection_id = ${connectionId}, revoked_at = null
    where id = ${merchantId}`;
  // revoked_at still set: a revoked merchant connected again (a reconnect, `reopenRevokedMerchant`).
  return { wasRevoked: before.revoked_at !== null };
}

/**
 * unconfirmed → unknown, with why: Loops does not know the merchant (404, or any other refusal of
 * GET /connection), so it is asked nothing more. One revoked before (a reconnect being confirmed) is revoked
 * again instead: the connection its event named is not one Loops answers for. Returns the status it moved
 * to, or null when it was not unconfirmed.
 */
export async function refuseMerchant(
  tx: TransactionSql,
  merchantId: string,
  why: string,
): Promise<Extract<MerchantStatus, "unknown" | "revoked"> | null> {
  const [row] = await tx<{ status: "unknown" | "revoked" }[]>`
    update sync.merchants
    set status = case when revoked_at is null then 'unknown' else 'revoked' end, confirm_error = ${why}
    where id = ${merchantId} and status = 'unconfirmed'
    returning status`;
  return row?.status ?? null;
}
