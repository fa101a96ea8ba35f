import { planForCurrentSize, type TransactionSql } from "@loops-sync/db";
import { enterPause, pauseMerchant, recordChanges, revokeMerchant } from "@loops-sync/replica";
import { withSpan } from "@loops-sync/tracing";
import type { WorkerContext } from "../worker-context.ts";
import { ORDER_BATCH_ROWS } from "./claim-orders.ts";
import { type FetchedClaims, fetchClaimedOrders } from "./fetch-claimed-orders.ts";
import type { OrderBatchOptions } from "./order-batch-options.ts";
import { handOffOrders, type RoutedOrders, routeOrderFailures } from "./route-order-failures.ts";
import { applyUnappliedOrders, settleOrderBatch } from "./settle-order-batch.ts";
import { claimOrdersTraced } from "./trace-order-refresh.ts";

export interface OrderBatchResult {
  /** Queue rows this batch took (0: nothing queued that another batch is not fetching). */
  rows: number;
  /** Rows may remain: come back at once. */
  more: boolean;
  /** Queued rows left to another batch that holds their orders: come back once it is likely done. */
  heldElsewhere?: number;
  /** Set when the merchant must not be called before this moment (a 429, now or earlier). */
  pausedUntil?: Date;
}

/**
 * One batch of a merchant's sync.order_refresh. Its transaction claims up to ORDER_BATCH_ROWS queued rows
 * whose orders no other batch is fetching (a transaction advisory lock per order, so a burst of one order is
 * checked against what the previous batch wrote) and skips the orders the replica already covers; the rest
 * are fetched (within the worker's bound on calls in flight), and each answer goes to the `applier`, which
 * commits it (version-gated) with its events' outcomes in a group commit shared with the other batches: an
 * order is readable as soon as its own answer is in. The claim commits after the last of them. A crash or
 * shutdown rolls the claim back, so its rows are fetched again, and the events an earlier commit settled
 * stay settled. Without an applier (a pool of one connection, which the batch holds) the answers are applied
 * in the batch's transaction, all at once after the last. While it fetches, the batch can take more of the
 * merchant's rows (`onJoinable`), so an event queued while every batch slot is busy is fetched at once.
 * Per order: 404 and malformed answers are recorded as failed; 5xx and timeouts hand the order to its own
 * refresh_order job (backoff, visible attempts); an upstream behind its events likewise, and an order whose
 * commit fails (failed too when Postgres refuses its data). A 429 stops the batch's further calls,
 * re-queues what was not fetched and pauses the merchant; a refusal of the application or of the merchant's
 * grant does the same and pauses its scope (upstream-pause.ts); 403 connection_not_active revokes it.
 */
export async function refreshOrderBatch(
  ctx: WorkerContext,
  options: OrderBatchOptions,
): Promise<OrderBatchResult> {
  const attributes = { "loops.merchant.id": options.merchantId };
  return await withSpan("refresh order batch", { attributes }, async (span) => {
    const result = await runOrderBatch(ctx, options);
    span?.setAttribute("loops.order_refresh.rows", result.rows);
    return result;
  });
}

/** {@link refreshOrderBatch}'s transaction. */
async function runOrderBatch(ctx: WorkerContext, options: OrderBatchOptions): Promise<OrderBatchResult> {
  const { merchantId, signal } = options;
  return await ctx.sql.begin(async (tx): Promise<OrderBatchResult> => {
    // Its settle (and, without an applier, its apply) look events up by id: planned for the table as it is.
    void planForCurrentSize(tx);
    const first = await claimOrdersTraced(tx, merchantId);
    const { state } = first;
    if (state.status === "revoked") {
      // Events stored after the revocation were queued all the same: settle them and drop their rows.
      await revokeMerchant(tx, merchantId);
      return { rows: 0, more: false };
    }
    if (state.pausedUntil) return { rows: 0, more: false, pausedUntil: state.pausedUntil };
    if (first.claimed.length === 0) return { rows: 0, more: false, heldElsewhere: first.heldElsewhere };

    const batch = await fetchClaimedOrders(ctx, tx, first, options);
    // Shutting down: roll the claim back; the rows wait for the next worker.
    if (signal.aborted) throw new Error("order refresh aborted by shutdown");
    const { answers, changes } = await applyUnappliedOrders(ctx, tx, batch.fetched);
    await settleOrderBatch(ctx, tx, batch.claimed);
    const routed = await routeOrderFailures(ctx, tx, merchantId, batch, answers);
    const result = await endOrderBatch(ctx, tx, merchantId, batch, routed);
    // Last before COMMIT: it takes the change feed's lock.
    await recordChanges(tx, changes);
    return result;
  });
}

/** The batch's end: revoke, or hand off what is left and pause on a 429 or a refusal; tells the refresher what next. */
async function endOrderBatch(
  ctx: WorkerContext,
  tx: TransactionSql,
  merchantId: string,
  { rows, heldElsewhere, heldHere, stopped }: FetchedClaims,
  routed: RoutedOrders,
): Promise<OrderBatchResult> {
  const { logger } = ctx;
  if (stopped?.kind === "revoked") {
    await revokeMerchant(tx, merchantId);
    logger.warn({ merchantId }, "connection not active: merchant marked revoked, no more calls");
    return { rows, more: false };
  }
  await handOffOrders(tx, merchantId, routed);
  if (stopped?.kind === "rate_limited") {
    const pausedUntil = await pauseMerchant(tx, merchantId, stopped.retryAfterSeconds);
    logger.warn(
      { merchantId, until: pausedUntil },
      "rate limited by Loops; merchant paused until Retry-After",
    );
    return { rows, more: false, pausedUntil };
  }
  if (stopped?.kind === "paused") {
    const pausedUntil = await enterPause(tx, stopped, merchantId, ctx.pauseBackoff);
    logger.warn(
      { merchantId, cause: stopped.cause, scope: stopped.scope, until: pausedUntil },
      "Loops refused the call; calls paused until a probe is accepted",
    );
    return { rows, more: false, pausedUntil };
  }
  return { rows, more: heldHere > 0 || rows + heldElsewhere >= ORDER_BATCH_ROWS, heldElsewhere };
}
