import type { LimitFunction } from "p-limit";
import type { OrderApplier } from "./order-applier.ts";

/**
 * GET /orders/{id} calls in flight per batch the refresher runs at once. The bound is the worker's, shared
 * by its batches (`fetchSlots`): a batch that claimed many rows fetches them all at once when the others
 * are small, instead of in waves of a fixed share.
 */
export const ORDER_FETCH_CONCURRENCY = 16;

export interface OrderBatchOptions {
  merchantId: string;
  /** Commits the fetched orders as they arrive; none: the batch applies them itself, at its end. */
  applier: OrderApplier | undefined;
  /** The worker's bound on order fetches in flight, shared by its batches. */
  fetchSlots: LimitFunction;
  /** Aborted on shutdown: the claim rolls back. */
  signal: AbortSignal;
  /**
   * Told, once the batch fetches, how to hand it more of the merchant's queued rows (`join` claims them in
   * the batch's transaction and fetches them with the rest; it returns false once the batch no longer
   * takes rows: past ORDER_BATCH_ROWS or ORDER_BATCH_JOIN_MS, stopped, or finishing); told `undefined`
   * when that time is over. The refresher joins when it has no free batch slot for the merchant.
   */
  onJoinable?: (join: (() => boolean) | undefined) => void;
}
