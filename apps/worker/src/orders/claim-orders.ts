import { type Claimed, claimQueuedOrders, type TransactionSql } from "@loops-sync/db";
import { type MerchantState, merchantStatus } from "@loops-sync/replica";

/** The claim's rows are the order queue's (packages/db/src/order-queue/claim-queued-orders.ts). */
export type { Claimed, ClaimedEvent } from "@loops-sync/db";

/**
 * Queue rows one batch considers; a full batch makes the refresher come back to the merchant at once. It
 * also bounds the advisory locks a batch holds (one per order): P / 2 batches × 100 per worker stay within
 * Postgres's lock table, which grows by 64 entries per connection the worker opens (docs/scaling.md).
 */
export const ORDER_BATCH_ROWS = 100;

/** The replica does not cover a claimed order: it lacks it or holds it older, or an event gave no version. */
export function needsFetch(c: Claimed): boolean {
  return c.version === null || c.replica_version === null || c.replica_version < c.version;
}

/** What a claim found: the merchant's state and the orders it took. */
export interface ClaimResult {
  state: Pick<MerchantState, "status" | "pausedUntil" | "connectionId">;
  claimed: Claimed[];
  /** Queued rows of orders another batch holds. */
  heldElsewhere: number;
  /** Queued rows of orders this batch has already (a join's claim leaves them). */
  heldHere: number;
}

/**
 * The batch's claim (`claimQueuedOrders`, the order queue's): the merchant's state and up to `limit` of its
 * queued rows whose orders no other batch holds, leaving the orders in `exclude` (the batch's own, on a join).
 */
export async function claimOrders(
  tx: TransactionSql,
  merchantId: string,
  /** Orders the batch has already: their rows are left queued, and counted as held elsewhere. */
  exclude: readonly string[] = [],
  limit = ORDER_BATCH_ROWS,
): Promise<ClaimResult> {
  const { status, pausedUntil, connectionId, ...taken } = await claimQueuedOrders(
    tx,
    merchantId,
    exclude,
    limit,
  );
  return { state: { status: merchantStatus(status), pausedUntil, connectionId }, ...taken };
}
