import type { TransactionSql } from "@loops-sync/db";
import type { SyncMerchantApi as MerchantApi } from "@loops-sync/loops-client";
import {
  type ApplyOrderResult,
  checkOrder,
  classifyUpstreamFailure,
  type OrderInput,
  type UpstreamFailure,
} from "@loops-sync/replica";
import { withSpan } from "@loops-sync/tracing";
import type { WorkerContext } from "../worker-context.ts";
import { type Claimed, type ClaimResult, needsFetch, ORDER_BATCH_ROWS } from "./claim-orders.ts";
import { fetchOrder } from "./fetch-order.ts";
import { observeCommitted, observeStage } from "./observe-order-stage.ts";
import type { OrderBatchOptions } from "./order-batch-options.ts";
import {
  claimOrdersTraced,
  inBatchContext,
  readTraceParents,
  traceOrderRefresh,
} from "./trace-order-refresh.ts";

/**
 * A batch takes rows its merchant queues while it fetches (`join`) for this long after it started; then it
 * only finishes, so its claim commits and the orders it locks are free again.
 */
export const ORDER_BATCH_JOIN_MS = 500;
/**
 * A batch runs its join claims at least this far apart: the joins asked for meanwhile share the next claim.
 * (Each NOTIFY asks for one; a claim is a statement, and on a busy machine its CPU is taken from every
 * other step.)
 */
export const ORDER_BATCH_JOIN_GAP_MS = 10;

/** What became of one claimed order the replica did not cover. */
export type Fetched =
  /** Fetched (at `fetchedAt`, performance.now()); applied by the batch itself at its end (no applier). */
  | { kind: "fetched"; claim: Claimed; order: OrderInput; fetchedAt: number }
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

/** Everything a batch claimed and what its fetches came to. */
export interface FetchedClaims {
  /** Every order claimed, by the first claim and the joins. */
  claimed: Claimed[];
  /** One per claimed order that needed a fetch. */
  fetched: Fetched[];
  /** Queue rows claimed. */
  rows: number;
  /** Rows of orders other batches hold (the same rows may be seen by several claims: the most at once). */
  heldElsewhere: number;
  /** Rows queued for orders this batch was already fetching when it joined: a new batch takes them at once. */
  heldHere: number;
  /** The 429, pause or revocation that stopped the batch's calls. */
  stopped: UpstreamFailure | undefined;
}

/**
 * Fetches the first claim's orders that the replica does not cover and, while they are fetched, takes the
 * joins the refresher hands in (`onJoinable`): each is one more claim in the batch's transaction, whose
 * orders are fetched with the rest. Resolves once no fetch and no join is left.
 */
export async function fetchClaimedOrders(
  ctx: WorkerContext,
  tx: TransactionSql,
  first: ClaimResult,
  options: OrderBatchOptions,
): Promise<FetchedClaims> {
  const { merchantId, signal, onJoinable } = options;
  const api = ctx.client.forMerchant(merchantId, { priority: "live" });
  const batch: FetchedClaims = {
    claimed: [],
    fetched: [],
    rows: 0,
    heldElsewhere: 0,
    heldHere: 0,
    stopped: undefined,
  };
  const fetches: Promise<Fetched>[] = [];
  const take = inBatchContext((claim: Omit<ClaimResult, "state">) => {
    batch.heldElsewhere = Math.max(batch.heldElsewhere, claim.heldElsewhere);
    batch.heldHere = Math.max(batch.heldHere, claim.heldHere);
    const traceParents = readTraceParents(tx, claim.claimed);
    for (const c of claim.claimed) {
      ctx.metrics.orderRefreshStage.observe({ stage: "queued" }, c.queued_seconds);
      batch.claimed.push(c);
      batch.rows += c.rows;
      if (needsFetch(c))
        fetches.push(
          traceOrderRefresh(c, traceParents, () => fetchClaimedOrder(ctx, api, c, options, batch)),
        );
    }
  });
  take(first);

  const joinUntil = performance.now() + ORDER_BATCH_JOIN_MS;
  let finishing = false;
  let joining: Promise<void> | undefined;
  // A claim waits its turn: one waiting claim serves every join made before it starts.
  let claimWaiting = false;
  let lastClaimAt = performance.now();
  const join = () => {
    if (finishing || batch.stopped || signal.aborted || batch.rows >= ORDER_BATCH_ROWS) return false;
    if (performance.now() > joinUntil) return false;
    if (claimWaiting) return true;
    claimWaiting = true;
    // One claim at a time on the batch's connection; each leaves alone the orders the batch has already.
    const claim = (joining ?? Promise.resolve()).then(
      inBatchContext(async () => {
        const wait = lastClaimAt + ORDER_BATCH_JOIN_GAP_MS - performance.now();
        if (wait > 0) await new Promise((r) => setTimeout(r, wait));
        claimWaiting = false;
        lastClaimAt = performance.now();
        if (batch.rows >= ORDER_BATCH_ROWS) return;
        const orders = batch.claimed.map((c) => c.order_id);
        take(await claimOrdersTraced(tx, merchantId, orders, ORDER_BATCH_ROWS - batch.rows));
      }),
    );
    // The loop below awaits it and fails the batch if it fails; until it gets there, this marks it handled
    // (an unhandled rejection would end the process).
    claim.catch(() => {});
    joining = claim;
    return true;
  };
  onJoinable?.(join);
  try {
    // Until no fetch and no join is left: a join may add fetches while the others finish.
    for (;;) {
      const count = fetches.length;
      const joined = joining;
      await joined;
      batch.fetched = await Promise.all(fetches);
      if (fetches.length === count && joining === joined) return batch;
    }
  } finally {
    finishing = true;
    onJoinable?.(undefined);
  }
}

/**
 * One order's GET, in one of the worker's fetch slots, then its commit by the applier (when there is one).
 * The slot is the call's only: waiting for the commit in it would let a slow commit starve the fetches.
 */
async function fetchClaimedOrder(
  { metrics }: WorkerContext,
  api: MerchantApi,
  claim: Claimed,
  { applier, fetchSlots, signal }: OrderBatchOptions,
  batch: FetchedClaims,
): Promise<Fetched> {
  const answer = await fetchSlots(async (): Promise<Fetched> => {
    if (batch.stopped || signal.aborted) return { kind: "skipped", claim };
    try {
      const order = checkOrder(await fetchOrder(api, claim.order_id, signal));
      return { kind: "fetched", claim, order, fetchedAt: observeStage(metrics, "fetch", claim.taken_at) };
    } catch (error) {
      const failure = classifyUpstreamFailure(error);
      if (failure.kind === "rate_limited" || failure.kind === "revoked" || failure.kind === "paused") {
        batch.stopped ??= failure;
      }
      return { kind: "failed", claim, failure, error, stage: "fetch" };
    }
  });
  if (answer.kind !== "fetched" || !applier) return answer;
  try {
    const attributes = { "loops.order.id": claim.order_id, "loops.order.version": answer.order.version };
    const applied = await withSpan("apply order", { attributes }, async (span) => {
      const result = await applier.apply(answer.order, claim.event_ids, claim.claimed_at);
      span?.setAttribute("loops.order.changed", result.changed);
      return result;
    });
    observeCommitted(metrics, claim, answer.fetchedAt);
    return { kind: "applied", claim, applied };
  } catch (error) {
    // As for a failed fetch: retried by the order's own job, or failed when Postgres refuses its data.
    return { kind: "failed", claim, failure: classifyUpstreamFailure(error), error, stage: "apply" };
  }
}
