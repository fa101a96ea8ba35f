import type { TransactionSql } from "../connection/connect.ts";

/**
 * Records that a complete listing of the merchant's locations, started at `listedAt` (the database's clock),
 * is being written, unless one that started later was written already: then it returns false and the
 * listing must not be written (a reconcile that listed before go-live would delete what go-live just wrote).
 * Its status stays. Call it inside the transaction that writes the listing, after taking the merchant's
 * listing lock.
 */
export async function recordLocationsListing(
  tx: TransactionSql,
  merchantId: string,
  listedAt: Date,
): Promise<boolean> {
  const [newer] = await tx`
    select 1 from sync.merchants where id = ${merchantId} and locations_listed_at > ${listedAt}`;
  if (newer) return false;
  await tx`update sync.merchants set locations_listed_at = ${listedAt} where id = ${merchantId}`;
  return true;
}
