import type { ApplyOrderResult, UpstreamFailure } from "@loops-sync/replica";
import type { Claimed, ClaimedEvent } from "./claim-orders.ts";

/** Which batch: numbered per scheduler, in the order batches start. */
export interface BatchRef {
  id: number;
  merchantId: string;
}

/** What became of one claimed order the replica did not cover. */
export type Fetched =
  /**
   * Fetched and committed by the applier. The order itself is not kept: a batch lives up to
   * ORDER_BATCH_JOIN_MS and more, and orders held that long reach V8's old generation, whose collections
   * are the expensive ones.
   */
  | { kind: "applied"; claim: Claimed; applied: ApplyOrderResult }
  /** The fetch failed, or (`apply`) its commit did (the database refused it, or gave up waiting for a lock). */
  | { kind: "failed"; claim: Claimed; failure: UpstreamFailure; error: unknown; stage: "fetch" | "apply" }
  /** Not called: a 429, a pause or a revocation had stopped the batch's calls, or the worker is shutting down. */
  | { kind: "skipped"; claim: Claimed };

/**
 * The one value a batch's steps pass along (claim → fetch and apply → settle → route → end), each step
 * filling its part. It lives as long as the batch's transaction.
 */
export interface BatchValue {
  ref: BatchRef;
  /** Every order claimed, by the first claim and the joins. */
  claimed: Claimed[];
  /** Queue rows claimed. */
  rows: number;
  /** Rows of orders other batches hold (the same rows may be seen by several claims: the most at once). */
  heldElsewhere: number;
  /** Rows queued for orders this batch was already fetching when it joined: a new batch takes them at once. */
  heldHere: number;
  /** One per claimed order that needed a fetch, once the fetch step is over. */
  fetched: Fetched[];
  /** Orders with events waiting for a version gap to fill (plan-order.ts): put back in the queue at the end. */
  held: Map<string, { events: ClaimedEvent[] }>;
  /**
   * Events of those orders that the replica already covers and no chain carries (the rest of the order
   * waits): settled by the batch's settle step, with the orders the replica covers whole.
   */
  covered: { claim: Claimed; eventIds: string[] }[];
  /** The 429, pause or revocation that stopped the batch's calls. */
  stopped: UpstreamFailure | undefined;
}

/** What a batch tells its scheduler when it ends. */
export interface OrderBatchResult {
  /** Queue rows this batch took (0: nothing queued that another batch is not fetching). */
  rows: number;
  /** Rows may remain: come back at once. */
  more: boolean;
  /** Queued rows left to another batch that holds their orders: come back once it is likely done. */
  heldElsewhere?: number;
  /** Events were put back to wait for a version gap: come back at this moment (performance.now()). */
  holdUntil?: number;
  /** Set when the merchant must not be called before this moment (a 429, now or earlier). */
  pausedUntil?: Date;
}

/**
 * The events of the order batches, emitted by the scheduler (`OrderScheduler.events`), in this order per
 * batch: `claimed` once, `joined` per join claim, `committed` per fetched order, `ended` once.
 */
export interface OrderBatchEvents {
  /** The batch's first claim answered (`orders` empty: nothing to take, and `ended` follows). */
  claimed: [{ batch: BatchRef; orders: string[]; rows: number; heldElsewhere: number }];
  /** A join claim answered: rows queued while the batch fetched, now part of it. */
  joined: [{ batch: BatchRef; orders: string[]; rows: number; heldHere: number; heldElsewhere: number }];
  /**
   * A fetched order's commit by the applier is over: `applied` when it committed (readable now), `error`
   * when it failed (the batch routes the order at its end).
   */
  committed: [{ batch: BatchRef; orderId: string; applied?: ApplyOrderResult; error?: unknown }];
  /** The batch's transaction is over: committed with `result`, or rolled back with `error`. */
  ended: [{ batch: BatchRef; result?: OrderBatchResult; error?: unknown }];
}
