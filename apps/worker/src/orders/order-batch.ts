import type { EventEmitter } from "node:events";
import {
  holdOrders,
  pauseMerchant,
  planForCurrentSize,
  recordChanges,
  type TransactionSql,
} from "@loops-sync/db";
import type { Coalescing, SyncMerchantApi } from "@loops-sync/loops-client";
import {
  checkOrder,
  classifyUpstreamFailure,
  enterPause,
  revokeMerchant,
  type StatusChain,
} from "@loops-sync/replica";
import { withSpan } from "@loops-sync/tracing";
import type { LimitFunction } from "p-limit";
import type { WorkerContext } from "../worker-context.ts";
import type { BatchRef, BatchValue, Fetched, OrderBatchEvents, OrderBatchResult } from "./batch-value.ts";
import { type Claimed, type ClaimResult, needsFetch, ORDER_BATCH_ROWS } from "./claim-orders.ts";
import { type CommitTarget, commitOrder } from "./commit-order.ts";
import { fetchOrder } from "./fetch-order.ts";
import { joinClaims } from "./join-claims.ts";
import { observeStage } from "./observe-order-stage.ts";
import type { OrderApplier } from "./order-applier.ts";
import { planOrder, REORDER_WAIT_MS } from "./plan-order.ts";
import { type ListPage, listedOrder, readListPage } from "./read-list-page.ts";
import { handOffOrders, routeOrderFailures } from "./route-order-failures.ts";
import { settleOrderBatch } from "./settle-order-batch.ts";
import { claimOrdersTraced, readTraceParents, traceOrderRefresh } from "./trace-order-refresh.ts";

/**
 * A batch takes rows its merchant queues while it fetches (a join) for this long after it started; then it
 * only finishes, so its claim commits and the orders it locks are free again.
 */
export const ORDER_BATCH_JOIN_MS = 500;
/** A batch with this many orders to fetch reads them from one list page instead of one GET each. */
export const LIST_FETCH_MIN_ORDERS = 2;
/** Held rows are tried again this long after they are due: the worker's and Postgres's clocks differ a little. */
const HOLD_SLACK_MS = 20;

export interface OrderBatchOptions {
  ref: BatchRef;
  /** Commits each fetched order as it arrives, in a group commit shared by the worker's batches. */
  applier: OrderApplier;
  /** The worker's bound on order fetches in flight, shared by its batches. */
  fetchSlots: LimitFunction;
  /** Aborted on shutdown: the claim rolls back. */
  signal: AbortSignal;
  /** Where the batch's events go (the scheduler's emitter). */
  events: EventEmitter<OrderBatchEvents>;
  /** How long after its fetch step starts the batch takes joins. Default: ORDER_BATCH_JOIN_MS. */
  joinMs?: number;
  /** Orders to fetch from which one list page replaces their single reads. Default: LIST_FETCH_MIN_ORDERS. */
  listFetchMin?: number;
  /** Whether list pages are read now (the request budget is busy, budget-pressure.ts). Default: always. */
  bulkReads?: () => boolean;
  /** How long a status event past a version gap waits for it. Default: REORDER_WAIT_MS (plan-order.ts). */
  reorderWaitMs?: number;
}

/**
 * Where a batch is: claiming (its first claim), fetching (fetches and commits; it takes joins until
 * `joinUntil`, one claim at a time through `joins`), finishing (settle, route, end: no more joins), ended.
 * The scheduler sees the moves as the batch's events: `claimed`, `joined`, `committed`, `ended`.
 */
type BatchStage =
  | { name: "claiming" }
  | { name: "fetching"; joinUntil: number; joins: Coalescing }
  | { name: "finishing" }
  | { name: "ended" };

/**
 * One batch of a merchant's sync.order_refresh, as one transaction and a straight pipeline over one value
 * ({@link BatchValue}):
 * 1. claim: up to ORDER_BATCH_ROWS queued rows whose orders no other batch is fetching (an advisory lock per
 *    order), skipping the orders the replica already covers (claim-orders.ts);
 * 2. fetch and apply: each order is fetched within the worker's bound on calls in flight and handed to the
 *    applier, whose commit makes it readable at once (order-applier.ts). While this step runs, the scheduler
 *    may hand the batch more of the merchant's rows ({@link join}): one more claim in its transaction;
 * 3. settle: the events of the orders the replica covered (settle-order-batch.ts);
 * 4. route: what could not be finished (route-order-failures.ts, where the per-order policy is written);
 * 5. end: revoke, hand off, pause on a 429 or a refusal, and tell the scheduler what next.
 * The claim commits after the last order's commit. A crash or shutdown rolls it back, so its rows are
 * fetched again, and the events an earlier commit settled stay settled.
 */
export class OrderBatch {
  readonly ref: BatchRef;
  readonly #ctx: WorkerContext;
  readonly #options: OrderBatchOptions;
  readonly #api: SyncMerchantApi;
  /** The pipeline's value; each step fills its part. */
  readonly #value: BatchValue;
  /** The fetches under way (the fetch step waits for all, a join adds to them). */
  readonly #fetches: Promise<Fetched>[] = [];
  /** Where the batch is; only the fetch step takes joins ({@link BatchStage}). */
  #stage: BatchStage = { name: "claiming" };
  /** Where each order's commit is told (commit-order.ts). */
  readonly #commits: CommitTarget;
  /** The merchant's connection when the batch claimed: its calls are made under it. */
  #connectionId: string | null = null;
  get #reorderWaitMs(): number {
    return this.#options.reorderWaitMs ?? REORDER_WAIT_MS;
  }

  constructor(ctx: WorkerContext, options: OrderBatchOptions) {
    this.ref = options.ref;
    this.#ctx = ctx;
    this.#options = options;
    this.#api = ctx.client.forMerchant(options.ref.merchantId, { priority: "live" });
    this.#commits = { ref: options.ref, metrics: ctx.metrics, events: options.events };
    this.#value = {
      ref: options.ref,
      claimed: [],
      rows: 0,
      heldElsewhere: 0,
      heldHere: 0,
      fetched: [],
      held: new Map(),
      covered: [],
      stopped: undefined,
    };
  }

  /** Runs the batch to its end (`ended` is emitted either way). */
  async run(): Promise<OrderBatchResult> {
    const attributes = { "loops.merchant.id": this.ref.merchantId };
    try {
      const result = await withSpan("refresh order batch", { attributes }, async (span) => {
        const done = await this.#ctx.sql.begin((tx) => this.#pipeline(tx));
        span?.setAttribute("loops.order_refresh.rows", done.rows);
        return done;
      });
      this.#options.events.emit("ended", { batch: this.ref, result });
      return result;
    } catch (error) {
      this.#options.events.emit("ended", { batch: this.ref, error });
      throw error;
    } finally {
      this.#stage = { name: "ended" };
    }
  }

  /** Whether the batch takes more of its merchant's rows now ({@link join}). */
  get joinable(): boolean {
    const v = this.#value;
    return (
      this.#stage.name === "fetching" &&
      performance.now() <= this.#stage.joinUntil &&
      !v.stopped &&
      !this.#options.signal.aborted &&
      v.rows < ORDER_BATCH_ROWS
    );
  }

  /**
   * Takes the merchant's rows queued since the batch's last claim, in one more claim of its transaction
   * (leaving the orders it has already); their orders are fetched with the rest. False when the batch no
   * longer takes rows: past ORDER_BATCH_ROWS or ORDER_BATCH_JOIN_MS, stopped, or past its fetch step.
   */
  join(): boolean {
    if (this.#stage.name !== "fetching" || !this.joinable) return false;
    // Joins asked for while a claim runs share the next one; a failed claim fails the fetch step.
    void this.#stage.joins.run();
    return true;
  }

  async #pipeline(tx: TransactionSql): Promise<OrderBatchResult> {
    // Its settle looks events up by id: planned for the table as it is.
    void planForCurrentSize(tx);
    const early = await this.#claim(tx);
    if (early) return early;
    await this.#fetchAndApply(tx);
    // Shutting down: roll the claim back; the rows wait for the next worker.
    if (this.#options.signal.aborted) throw new Error("order refresh aborted by shutdown");
    await settleOrderBatch(this.#ctx, tx, this.#value);
    return await this.#routeAndEnd(tx);
  }

  /** Step 1: the first claim. A result when the batch ends here (revoked, paused, nothing to take). */
  async #claim(tx: TransactionSql): Promise<OrderBatchResult | undefined> {
    const { merchantId } = this.ref;
    const first = await claimOrdersTraced(tx, merchantId);
    const { state } = first;
    this.#connectionId = state.connectionId;
    const orders = first.claimed.map((c) => c.order_id);
    const rows = first.claimed.reduce((n, c) => n + c.rows, 0);
    this.#options.events.emit("claimed", {
      batch: this.ref,
      orders,
      rows,
      heldElsewhere: first.heldElsewhere,
    });
    if (state.status === "revoked") {
      // Events stored after the revocation were queued all the same: settle them and drop their rows.
      await recordChanges(tx, (await revokeMerchant(tx, merchantId, { source: "webhook" })).changes);
      return { rows: 0, more: false };
    }
    if (state.pausedUntil) return { rows: 0, more: false, pausedUntil: state.pausedUntil };
    if (first.claimed.length === 0) return { rows: 0, more: false, heldElsewhere: first.heldElsewhere };
    this.#take(tx, first);
    return undefined;
  }

  /** Adds a claim's orders to the value and starts the fetches of those the replica does not cover. */
  #take(tx: TransactionSql, claim: Omit<ClaimResult, "state">): void {
    const v = this.#value;
    v.heldElsewhere = Math.max(v.heldElsewhere, claim.heldElsewhere);
    v.heldHere = Math.max(v.heldHere, claim.heldHere);
    const traceParents = readTraceParents(tx, claim.claimed);
    const toFetch: Claimed[] = [];
    for (const c of claim.claimed) {
      this.#ctx.metrics.orderRefreshStage.observe({ stage: "queued" }, c.queued_seconds);
      v.claimed.push(c);
      v.rows += c.rows;
      if (!needsFetch(c)) continue;
      const plan = planOrder(c, this.ref.merchantId, this.#reorderWaitMs);
      if (plan.hold) {
        v.held.set(c.order_id, { events: plan.hold.events });
        // No chain to settle them with: the events the replica covers are settled with the claim's.
        if (!plan.chain && plan.settles.length > 0) v.covered.push({ claim: c, eventIds: plan.settles });
      }
      if (plan.chain) {
        const chain = plan.chain;
        this.#fetches.push(
          traceOrderRefresh(c, traceParents, () => this.#applyChainOrFetch(c, chain, plan.settles)),
        );
      } else if (plan.fetch) {
        toFetch.push(c);
      }
    }
    const listFrom = this.#options.listFetchMin ?? LIST_FETCH_MIN_ORDERS;
    const bulk = toFetch.length >= listFrom && (this.#options.bulkReads?.() ?? true);
    const { fetchSlots, signal } = this.#options;
    const stopped = () => v.stopped !== undefined;
    const list = bulk ? readListPage(this.#api, toFetch, { fetchSlots, signal, stopped }) : undefined;
    for (const c of toFetch) {
      this.#fetches.push(
        traceOrderRefresh(c, traceParents, () =>
          list ? this.#applyListedOrFetch(c, list) : this.#fetchAndApplyOne(c),
        ),
      );
    }
  }

  /** The order from the batch's list page when it holds the version its events announced, else fetched alone. */
  async #applyListedOrFetch(claim: Claimed, list: Promise<ListPage>): Promise<Fetched> {
    const listed = await listedOrder(list, claim);
    if (!listed) return await this.#fetchAndApplyOne(claim);
    const { applier } = this.#options;
    const committed = await commitOrder(this.#commits, claim, async () => {
      const order = checkOrder(listed);
      const fetchedAt = observeStage(this.#ctx.metrics, "fetch", claim.taken_at);
      return { applied: await applier.apply(order, claim.event_ids, claim.claimed_at), fetchedAt };
    });
    return committed!;
  }

  /**
   * Status events that chain: applied from their payloads, no call. When the gate refuses them (the stored
   * row moved since the claim read it), the order is fetched instead, as any event it cannot prove.
   */
  async #applyChainOrFetch(claim: Claimed, chain: StatusChain, settles: string[]): Promise<Fetched> {
    const { applier } = this.#options;
    const attributes = {
      "loops.order.id": claim.order_id,
      "loops.order.version": chain.steps.at(-1)!.version,
    };
    const committed = await commitOrder(this.#commits, claim, async () => {
      const applied = await withSpan("apply order from event", { attributes }, () =>
        applier.applyChain(chain, settles, claim.claimed_at),
      );
      // No call was made: its commit stage starts at the claim.
      return applied.changed ? { applied, fetchedAt: claim.taken_at } : undefined;
    });
    if (committed) return committed;
    this.#value.held.delete(claim.order_id);
    return await this.#fetchAndApplyOne(claim);
  }

  /** Step 2: the fetches and their commits, taking joins until none is left. */
  async #fetchAndApply(tx: TransactionSql): Promise<void> {
    const v = this.#value;
    const { joins, failed } = joinClaims({
      tx,
      ref: this.ref,
      value: v,
      events: this.#options.events,
      take: (joined) => this.#take(tx, joined),
    });
    this.#stage = {
      name: "fetching",
      joinUntil: performance.now() + (this.#options.joinMs ?? ORDER_BATCH_JOIN_MS),
      joins,
    };
    try {
      // Until no fetch and no join is left: a join may add fetches while the others finish.
      for (;;) {
        const count = this.#fetches.length;
        await joins.ended();
        const failure = failed();
        if (failure) throw failure.error;
        v.fetched = await Promise.all(this.#fetches);
        if (this.#fetches.length === count && !joins.running) return;
      }
    } finally {
      this.#stage = { name: "finishing" };
    }
  }

  /**
   * One order's GET, in one of the worker's fetch slots, then its commit by the applier. The slot is the
   * call's only: waiting for the commit in it would let a slow commit starve the fetches.
   */
  async #fetchAndApplyOne(claim: Claimed): Promise<Fetched> {
    const { metrics } = this.#ctx;
    const { applier, fetchSlots, signal } = this.#options;
    const v = this.#value;
    const answer = await fetchSlots(async () => {
      if (v.stopped || signal.aborted) return { kind: "skipped" as const, claim };
      try {
        const order = checkOrder(await fetchOrder(this.#api, claim.order_id, signal));
        return { kind: "fetched" as const, order, fetchedAt: observeStage(metrics, "fetch", claim.taken_at) };
      } catch (error) {
        const failure = classifyUpstreamFailure(error);
        if (failure.kind === "rate_limited" || failure.kind === "revoked" || failure.kind === "paused") {
          v.stopped ??= failure;
        }
        return { kind: "failed" as const, claim, failure, error, stage: "fetch" as const };
      }
    });
    if (answer.kind !== "fetched") return answer;
    const attributes = { "loops.order.id": claim.order_id, "loops.order.version": answer.order.version };
    const committed = await commitOrder(this.#commits, claim, async () => {
      const applied = await withSpan("apply order", { attributes }, async (span) => {
        const result = await applier.apply(answer.order, claim.event_ids, claim.claimed_at);
        span?.setAttribute("loops.order.changed", result.changed);
        return result;
      });
      return { applied, fetchedAt: answer.fetchedAt };
    });
    return committed!;
  }

  /** Steps 4 and 5: route what could not be finished; revoke, hand off, or pause; tell the scheduler what next. */
  async #routeAndEnd(tx: TransactionSql): Promise<OrderBatchResult> {
    const { logger } = this.#ctx;
    const { merchantId } = this.ref;
    const { rows, heldElsewhere, heldHere, stopped } = this.#value;
    const routed = await routeOrderFailures(this.#ctx, tx, merchantId, this.#value);
    if (stopped?.kind === "revoked") {
      // A reconnect confirmed while the batch fetched makes its refusal stale: it revokes only the connection
      // the calls were made under, and the refused orders are fetched again under the new one.
      const { stale, changes } = await revokeMerchant(tx, merchantId, {
        source: "webhook",
        refusedUnder: this.#connectionId,
      });
      if (stale) await handOffOrders(tx, merchantId, routed);
      // Last in the transaction: recordChanges takes the feed's lock.
      await recordChanges(tx, changes);
      if (stale) {
        logger.info({ merchantId }, "a refusal made under the merchant's old connection; fetched again");
        return { rows, more: true };
      }
      logger.warn({ merchantId }, "connection not active: merchant marked revoked, no more calls");
      return { rows, more: false };
    }
    await handOffOrders(tx, merchantId, routed);
    const holdUntil = await this.#holdGaps(tx);
    if (stopped?.kind === "rate_limited") {
      const pausedUntil = await pauseMerchant(tx, merchantId, stopped.retryAfterSeconds);
      logger.warn(
        { merchantId, until: pausedUntil },
        "rate limited by Loops; merchant paused until Retry-After",
      );
      return { rows, more: false, pausedUntil };
    }
    if (stopped?.kind === "paused") {
      const pausedUntil = await enterPause(tx, stopped, merchantId, this.#ctx.pauseBackoff);
      logger.warn(
        { merchantId, cause: stopped.cause, scope: stopped.scope, until: pausedUntil },
        "Loops refused the call; calls paused until a probe is accepted",
      );
      return { rows, more: false, pausedUntil };
    }
    return {
      rows,
      more: heldHere > 0 || rows + heldElsewhere >= ORDER_BATCH_ROWS,
      heldElsewhere,
      ...(holdUntil ? { holdUntil } : {}),
    };
  }

  /** Puts the events waiting for a version gap back in the queue; when the first of them is due again. */
  async #holdGaps(tx: TransactionSql): Promise<number | undefined> {
    const { held, claimed } = this.#value;
    if (held.size === 0) return undefined;
    const rows = claimed.flatMap((c) =>
      (held.get(c.order_id)?.events ?? []).map((e) => ({
        order_id: c.order_id,
        version: e.version,
        event_id: e.id,
        queued_at: e.queued_at,
      })),
    );
    await holdOrders(tx, this.ref.merchantId, rows, this.#reorderWaitMs);
    const ages = claimed.flatMap((c) => (held.get(c.order_id)?.events ?? []).map((e) => e.age_seconds));
    // Due again when the youngest's wait ends (from its first queueing, Postgres's clock), a little after.
    return performance.now() + Math.max(0, this.#reorderWaitMs - Math.min(...ages) * 1000) + HOLD_SLACK_MS;
  }
}
