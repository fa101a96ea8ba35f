import { queueOrders, settleOrderEvents, type TransactionSql } from "@loops-sync/db";
import { enqueueJob } from "@loops-sync/replica";
import type { WorkerContext } from "../worker-context.ts";
import type { BatchValue } from "./batch-value.ts";
import type { Claimed } from "./claim-orders.ts";
import { orderJobKey } from "./refresh-order-task.ts";

/** A transiently failed order is retried by its own refresh_order job after this pause. */
const HAND_OFF_DELAY_MS = 1000;

/** Where the batch's unfinished orders go. */
export interface RoutedOrders {
  /** Orders handed to their own refresh_order jobs: transient failures, and an upstream behind its events. */
  retry: Set<string>;
  /** Claims put back in the queue: not fetched (a 429 or a pause stopped the calls), or refused so. */
  requeue: Claimed[];
}

/**
 * Sorts what the batch could not finish: an upstream that answered older than the claimed events announced,
 * and a transient failure (of the fetch or of the commit), retry the order in its own refresh_order job; a
 * 429, a pause and an order never called go back in the queue; a permanent refusal (404, a malformed answer, data
 * Postgres refuses) records the order's events as failed, here.
 */
export async function routeOrderFailures(
  { metrics, logger }: WorkerContext,
  tx: TransactionSql,
  merchantId: string,
  { claimed, fetched, held }: Pick<BatchValue, "claimed" | "fetched"> & Partial<Pick<BatchValue, "held">>,
): Promise<RoutedOrders> {
  const after = new Map(
    fetched.flatMap((f) => (f.kind === "applied" ? [[f.applied.id, f.applied.version] as const] : [])),
  );
  const retry = new Set(
    claimed
      // An order with events waiting for a gap is behind them on purpose (they are put back in the queue).
      .filter(
        (c) =>
          c.version !== null &&
          after.has(c.order_id) &&
          after.get(c.order_id)! < c.version &&
          !held?.has(c.order_id),
      )
      .map((c) => c.order_id),
  );
  if (retry.size > 0) {
    logger.info(
      { merchantId, orders: retry.size },
      "upstream behind its events; handed to refresh_order jobs to retry with backoff",
    );
  }
  const requeue: Claimed[] = [];
  for (const f of fetched) {
    if (f.kind === "skipped") requeue.push(f.claim);
    if (f.kind !== "failed") continue;
    const { claim, failure } = f;
    const committing = f.stage === "apply";
    if (!committing) metrics.upstreamFailures.inc({ kind: failure.kind });
    // A 429 or a pause is no fault of the order: it waits in the queue, its events stay pending. So does a
    // refusal: when the merchant is revoked its queue is dropped, when the refusal is stale it is fetched again.
    if (failure.kind === "rate_limited" || failure.kind === "paused" || failure.kind === "revoked")
      requeue.push(claim);
    else if (failure.kind === "transient") {
      retry.add(claim.order_id);
      logger.warn(
        { merchantId, orderId: claim.order_id, error: String(f.error) },
        `${committing ? "committing the fetched order" : "order fetch"} failed; handed to its own refresh_order job to retry with backoff`,
      );
    } else if (failure.kind === "permanent") {
      await settleOrderEvents(tx, merchantId, claim.order_id, "failed", failure.message);
      logger.warn(
        { merchantId, orderId: claim.order_id, error: failure.message },
        `${committing ? "Postgres" : "upstream"} refused; recorded as failed`,
      );
    }
  }
  return { retry, requeue };
}

/**
 * Adds a refresh_order job per order to retry (each keeps its own backoff and attempts; the rest of the
 * merchant's queue goes on) and puts the requeued claims' rows back in the queue.
 */
export async function handOffOrders(
  tx: TransactionSql,
  merchantId: string,
  { retry, requeue }: RoutedOrders,
): Promise<void> {
  const later = new Date(Date.now() + HAND_OFF_DELAY_MS);
  for (const orderId of [...retry].sort()) {
    await enqueueJob(tx, {
      task: "refresh_order",
      payload: { merchantId, orderId },
      jobKey: orderJobKey(merchantId, orderId),
      jobKeyMode: "preserve_run_at",
      merchantId,
      runAt: later,
    });
  }
  if (requeue.length === 0) return;
  await queueOrders(
    tx,
    merchantId,
    requeue.flatMap((c) =>
      c.event_ids.map((event_id) => ({ order_id: c.order_id, version: c.version, event_id })),
    ),
  );
}
