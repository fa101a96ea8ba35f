import type { EventEmitter } from "node:events";
import type { TransactionSql } from "@loops-sync/db";
import { type Coalescing, coalescing } from "@loops-sync/loops-client";
import type { BatchRef, BatchValue, OrderBatchEvents } from "./batch-value.ts";
import { type ClaimResult, ORDER_BATCH_ROWS } from "./claim-orders.ts";
import { claimOrdersTraced, inBatchContext } from "./trace-order-refresh.ts";

/**
 * A batch runs its join claims at least this far apart: the joins asked for meanwhile share the next claim.
 * (Each NOTIFY asks for one; a claim is a statement, and on a busy machine its CPU is taken from every
 * other step.)
 */
export const ORDER_BATCH_JOIN_GAP_MS = 10;

export interface JoinClaimsOptions {
  /** The batch's transaction: a join is one more claim in it. */
  tx: TransactionSql;
  ref: BatchRef;
  value: BatchValue;
  events: EventEmitter<OrderBatchEvents>;
  /** Adds a claim's orders to the batch and starts their fetches. */
  take(claim: Omit<ClaimResult, "state">): void;
}

export interface JoinClaims {
  /** Runs a join claim; joins asked for while one runs share the next. "done" once no more can be taken. */
  readonly joins: Coalescing;
  /** The first join claim that failed: it fails the batch's fetch step. */
  failed(): { error: unknown } | undefined;
}

/**
 * The batch's joins: the merchant's rows queued since its last claim, taken in one more claim of its
 * transaction (leaving the orders it has already), one claim at a time, in the batch's trace context whoever
 * asks for it. Each is told to the scheduler (`joined`).
 */
export function joinClaims({ tx, ref, value: v, events, take }: JoinClaimsOptions): JoinClaims {
  let lastClaimAt = performance.now();
  let failed: { error: unknown } | undefined;
  const joins = coalescing(
    inBatchContext(async () => {
      const wait = lastClaimAt + ORDER_BATCH_JOIN_GAP_MS - performance.now();
      if (wait > 0) await new Promise((r) => setTimeout(r, wait));
      lastClaimAt = performance.now();
      if (v.rows >= ORDER_BATCH_ROWS || failed) return "done";
      try {
        const have = v.claimed.map((c) => c.order_id);
        const joined = await claimOrdersTraced(tx, ref.merchantId, have, ORDER_BATCH_ROWS - v.rows);
        take(joined);
        events.emit("joined", {
          batch: ref,
          orders: joined.claimed.map((c) => c.order_id),
          rows: joined.claimed.reduce((n, c) => n + c.rows, 0),
          heldHere: joined.heldHere,
          heldElsewhere: joined.heldElsewhere,
        });
        return undefined;
      } catch (error) {
        failed = { error };
        return "done";
      }
    }),
  );
  return { joins, failed: () => failed };
}
