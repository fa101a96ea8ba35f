import type { ApplyOrderResult } from "@loops-sync/replica";
import { checkOrder, enqueueJob, type OrderInput, pauseMerchant, revokeMerchant } from "@loops-sync/replica";
import type { LimitFunction } from "p-limit";
import { classifyUpstreamFailure, type UpstreamFailure } from "../upstreamFailure.ts";
import type { WorkerContext } from "../workerContext.ts";
import { applyFetchedOrders, countApplied } from "./apply-fetched-orders.ts";
import { type Claimed, claimOrders, ORDER_BATCH_ROWS, queueOrders } from "./claim-orders.ts";
import { fetchOrder } from "./fetch-order.ts";
import type { OrderApplier } from "./order-applier.ts";
import { orderJobKey } from "./refresh-order-task.ts";
import { resolveOrderBatchEvents, settleClaimedEvents, settleOrderEvents } from "./settle-order-events.ts";

/**
 * GET /orders/{id} calls in flight per batch the refresher runs at once. The bound is the worker's, shared
 * by its batches (`fetchSlots`): a batch that claimed many rows fetches them all at once when the others
 * are small, instead of in waves of a fixed share.
 */
export const ORDER_FETCH_CONCURRENCY = 16;
/**
 * A batch takes rows its merchant queues while it fetches (`join`) for this long after it started; then it
 * only finishes, so its claim commits and the orders it locks are free again.
 */
export const ORDER_BATCH_JOIN_MS = 500;
/**
 * A batch runs its join claims at least this far apart: the joins asked for meanwhile share the next claim.
 * (Each NOTIFY asks for one, hundreds a second under load; a claim is a statement, and the CPU they cost was
 * felt by every other step on a busy machine.)
 */
export const ORDER_BATCH_JOIN_GAP_MS = 10;
/** A transiently failed order is retried by its own refresh_order job after this pause. */
const HAND_OFF_DELAY_MS = 1000;

type Fetched =
  /** Fetched (at `fetchedAt`, performance.now()); applied by the batch itself at its end (no applier). */
  | { claim: Claimed; order: OrderInput; fetchedAt: number }
  /**
   * Fetched and committed by the applier. The order itself is not kept: a batch lives up to
   * ORDER_BATCH_JOIN_MS and more, and orders held that long reach V8's old generation, whose collections
   * are the expensive ones.
   */
  | { claim: Claimed; applied: ApplyOrderResult }
  /** `apply`: fetched, but its commit failed (the database refused it, or gave up waiting for a lock). */
  | { claim: Claimed; failure: UpstreamFailure; error: unknown; stage?: "apply" }
  | { claim: Claimed; skipped: true };

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
 * are fetched (within the worker's bound on calls in flight), and each answer goes to the `applier`, which commits it
 * (version-gated) with its events' outcomes in a group commit shared with the other batches: an order is
 * readable as soon as its own answer is in. The claim commits after the last of them. A crash or shutdown
 * rolls the claim back, so its rows are fetched again, and the events an earlier commit settled stay settled.
 * Without an applier (a pool of one connection, which the batch holds) the answers are applied in the
 * batch's transaction, all at once after the last. While it fetches, the batch can take more of the
 * merchant's rows (`onJoinable`), so an event queued while every batch slot is busy is fetched at once.
 * Per order: 404 and malformed answers are recorded as failed; 5xx and timeouts hand the order to its own
 * refresh_order job (backoff, visible attempts); an upstream behind its events likewise, and an order whose
 * commit fails (failed too when Postgres refuses its data). A 429 stops the
 * batch's further calls, re-queues what was not fetched and pauses the merchant; 403 connection_not_active
 * revokes it.
 */
export async function refreshOrderBatch(
  ctx: WorkerContext,
  { merchantId, applier, fetchSlots, signal, onJoinable }: OrderBatchOptions,
): Promise<OrderBatchResult> {
  const { sql, client, metrics, logger } = ctx;
  const api = client.forMerchant(merchantId);

  return await sql.begin(async (tx): Promise<OrderBatchResult> => {
    const first = await claimOrders(tx, merchantId);
    const { state } = first;
    if (state.status === "revoked") {
      // Events stored after the revocation were queued all the same: settle them and drop their rows.
      await revokeMerchant(tx, merchantId);
      return { rows: 0, more: false };
    }
    if (state.pausedUntil) return { rows: 0, more: false, pausedUntil: state.pausedUntil };
    if (first.claimed.length === 0) return { rows: 0, more: false, heldElsewhere: first.heldElsewhere };
    const isNeeded = (c: Claimed) =>
      c.version === null || c.replica_version === null || c.replica_version < c.version;
    const claimed: Claimed[] = [];
    const fetches: Promise<Fetched>[] = [];
    let rows = 0;
    // Rows of orders other batches hold (the same rows may be seen by several claims: the most at once).
    let heldElsewhere = 0;
    // Rows queued for orders this batch was already fetching when it joined: a new batch takes them at once.
    let heldHere = 0;
    let stopped: UpstreamFailure | undefined;
    // The slot is the call's only: waiting for the commit in it would let a slow commit starve the fetches.
    const fetchOne = async (claim: Claimed): Promise<Fetched> => {
      const answer = await fetchSlots(async (): Promise<Exclude<Fetched, { applied: unknown }>> => {
        if (stopped || signal.aborted) return { claim, skipped: true };
        try {
          const order = checkOrder(await fetchOrder(api, claim.order_id, signal));
          return { claim, order, fetchedAt: observeStage(metrics, "fetch", claim.taken_at) };
        } catch (error) {
          const failure = classifyUpstreamFailure(error);
          if (failure.kind === "rate_limited" || failure.kind === "revoked") stopped ??= failure;
          return { claim, failure, error };
        }
      });
      if (!("order" in answer) || !applier) return answer;
      try {
        const applied = await applier.apply(answer.order, claim.event_ids);
        observeCommitted(metrics, claim, answer.fetchedAt);
        return { claim, applied };
      } catch (error) {
        // As for a failed fetch: retried by the order's own job, or failed when Postgres refuses its data.
        return { claim, failure: classifyUpstreamFailure(error), error, stage: "apply" };
      }
    };
    const take = (claim: { claimed: Claimed[]; heldElsewhere: number; heldHere: number }) => {
      heldElsewhere = Math.max(heldElsewhere, claim.heldElsewhere);
      heldHere = Math.max(heldHere, claim.heldHere);
      for (const c of claim.claimed) {
        metrics.orderRefreshStage.observe({ stage: "queued" }, c.queued_seconds);
        claimed.push(c);
        rows += c.rows;
        if (isNeeded(c)) fetches.push(fetchOne(c));
      }
    };
    take(first);

    const joinUntil = performance.now() + ORDER_BATCH_JOIN_MS;
    let finishing = false;
    let joining: Promise<void> | undefined;
    // A claim waits its turn: one waiting claim serves every join made before it starts.
    let claimWaiting = false;
    let lastClaimAt = performance.now();
    const join = () => {
      if (finishing || stopped || signal.aborted || rows >= ORDER_BATCH_ROWS || performance.now() > joinUntil)
        return false;
      if (claimWaiting) return true;
      claimWaiting = true;
      // One claim at a time on the batch's connection; each leaves alone the orders the batch has already.
      const claim = (joining ?? Promise.resolve()).then(async () => {
        const wait = lastClaimAt + ORDER_BATCH_JOIN_GAP_MS - performance.now();
        if (wait > 0) await new Promise((r) => setTimeout(r, wait));
        claimWaiting = false;
        lastClaimAt = performance.now();
        if (rows >= ORDER_BATCH_ROWS) return;
        take(
          await claimOrders(
            tx,
            merchantId,
            claimed.map((c) => c.order_id),
            ORDER_BATCH_ROWS - rows,
          ),
        );
      });
      // The loop below awaits it and fails the batch if it fails; until it gets there, this marks it handled
      // (an unhandled rejection would end the process).
      claim.catch(() => {});
      joining = claim;
      return true;
    };
    onJoinable?.(join);
    let fetched: Fetched[];
    try {
      // Until no fetch and no join is left: a join may add fetches while the others finish.
      for (;;) {
        const count = fetches.length;
        const joined = joining;
        await joined;
        fetched = await Promise.all(fetches);
        if (fetches.length === count && joining === joined) break;
      }
    } finally {
      finishing = true;
      onJoinable?.(undefined);
    }
    // Shutting down: roll the claim back; the rows wait for the next worker.
    if (signal.aborted) throw new Error("order refresh aborted by shutdown");

    // Each fetched order with what its commit found: the applier's, or (no applier) this transaction's now.
    const answers = fetched.flatMap((f) => ("applied" in f ? [f] : []));
    const unapplied = fetched.flatMap((f) => ("order" in f ? [f] : []));
    if (unapplied.length > 0) {
      const group = await applyFetchedOrders(
        tx,
        unapplied.map((f) => ({ order: f.order, eventIds: f.claim.event_ids })),
      );
      countApplied(ctx, group);
      for (const f of unapplied) observeCommitted(metrics, f.claim, f.fetchedAt);
      answers.push(...unapplied.map((f, i) => ({ claim: f.claim, applied: group.applied[i]! })));
    }
    // The applier settled the fetched orders' events; the covered ones are settled here.
    const covered = claimed
      .filter((c) => !isNeeded(c))
      .map((c) => ({ claim: c, versionBefore: c.replica_version }));
    const outcomes = await settleClaimedEvents(tx, covered);
    const answered = [
      ...covered,
      ...answers.map((f) => ({ claim: f.claim, versionBefore: f.applied.previousVersion })),
    ];
    // Not the time read before the claim: an event stored in between has its row claimed there.
    for (const [at, unlinked] of Map.groupBy(
      answered.filter((a) => a.claim.unlinked),
      (a) => a.claim.claimed_at.getTime(),
    )) {
      const more = await resolveOrderBatchEvents(tx, {
        merchantId,
        orders: unlinked.map((a) => ({ orderId: a.claim.order_id, versionBefore: a.versionBefore })),
        receivedBefore: new Date(at),
      });
      for (const [outcome, n] of Object.entries(more)) outcomes[outcome] = (outcomes[outcome] ?? 0) + n;
    }
    for (const [outcome, n] of Object.entries(outcomes)) metrics.events.inc({ outcome }, n);
    // The upstream answered older than the claimed events announced: retry those orders with backoff.
    const after = new Map(answers.map((f) => [f.applied.id, f.applied.version]));
    const retry = new Set(
      claimed
        .filter((c) => c.version !== null && after.has(c.order_id) && after.get(c.order_id)! < c.version)
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
      if ("order" in f || "applied" in f) continue;
      const { claim } = f;
      if ("skipped" in f) {
        requeue.push(claim);
        continue;
      }
      const committing = "stage" in f;
      if (!committing) metrics.upstreamFailures.inc({ kind: f.failure.kind });
      if (f.failure.kind === "rate_limited") requeue.push(claim);
      else if (f.failure.kind === "transient") {
        retry.add(claim.order_id);
        logger.warn(
          { merchantId, orderId: claim.order_id, error: String(f.error) },
          `${committing ? "committing the fetched order" : "order fetch"} failed; handed to its own refresh_order job to retry with backoff`,
        );
      } else if (f.failure.kind === "permanent") {
        await settleOrderEvents(tx, merchantId, claim.order_id, "failed", f.failure.message);
        logger.warn(
          { merchantId, orderId: claim.order_id, error: f.failure.message },
          `${committing ? "Postgres" : "upstream"} refused; recorded as failed`,
        );
      }
    }
    if (stopped?.kind === "revoked") {
      await revokeMerchant(tx, merchantId);
      logger.warn({ merchantId }, "connection not active: merchant marked revoked, no more calls");
      return { rows, more: false };
    }
    // Each order keeps its own backoff and attempts; the rest of the merchant's queue goes on.
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
    if (requeue.length > 0) {
      await queueOrders(
        tx,
        merchantId,
        requeue.flatMap((c) => [
          ...c.event_ids.map((event_id) => ({ order_id: c.order_id, version: c.version, event_id })),
          ...(c.unlinked ? [{ order_id: c.order_id, version: c.version, event_id: null }] : []),
        ]),
      );
    }
    if (stopped?.kind === "rate_limited") {
      const pausedUntil = await pauseMerchant(tx, merchantId, stopped.retryAfterSeconds);
      logger.warn(
        { merchantId, until: pausedUntil },
        "rate limited by Loops; merchant paused until Retry-After",
      );
      return { rows, more: false, pausedUntil };
    }
    return { rows, more: heldHere > 0 || rows + heldElsewhere >= ORDER_BATCH_ROWS, heldElsewhere };
  });
}

/** Observes a stage that started at `since` (performance.now()) and ends now; returns now. */
function observeStage(metrics: WorkerContext["metrics"], stage: "fetch" | "commit", since: number): number {
  const now = performance.now();
  metrics.orderRefreshStage.observe({ stage }, (now - since) / 1000);
  return now;
}

/** A fetched order is committed: its commit stage, and its lag from the event's queue row to now. */
function observeCommitted(metrics: WorkerContext["metrics"], claim: Claimed, fetchedAt: number): void {
  const now = observeStage(metrics, "commit", fetchedAt);
  metrics.orderRefreshLag.observe(claim.queued_seconds + (now - claim.taken_at) / 1000);
}
