import { EventEmitter } from "node:events";
import { ORDER_REFRESH_CHANNEL, type Sql } from "@loops-sync/db";
import { coalescing } from "@loops-sync/loops-client";
import pLimit, { type LimitFunction } from "p-limit";
import type { WorkerContext } from "../worker-context.ts";
import type { OrderBatchEvents } from "./batch-value.ts";
import { createOrderApplier, type OrderApplier } from "./order-applier.ts";
import { OrderBatch } from "./order-batch.ts";

/**
 * GET /orders/{id} calls in flight per batch the scheduler runs at once. The bound is the worker's, shared
 * by its batches: a batch that claimed many rows fetches them all at once when the others are small,
 * instead of in waves of a fixed share.
 */
export const ORDER_FETCH_CONCURRENCY = 16;
/** A batch that left rows to another batch holding their orders tries them again this much later. */
const HELD_RETRY_MS = 50;

export interface OrderSchedulerOptions {
  /**
   * Batches run at once by this process (each holds one pooled connection while it fetches; the applier's
   * commits need one more). Default: 8.
   */
  concurrency?: number;
  /** Looks for queued orders this often even without a NOTIFY (one lost while reconnecting). Default: 1000 ms. */
  pollIntervalMs?: number;
  /** How long a batch takes joins once it fetches. Default: ORDER_BATCH_JOIN_MS (order-batch.ts). */
  joinMs?: number;
  /** A batch with this many orders to fetch reads one list page instead. Default: LIST_FETCH_MIN_ORDERS. */
  listFetchMin?: number;
  /** Whether batches read list pages now (the request budget is busy, budget-pressure.ts). Default: always. */
  bulkReads?: () => boolean;
  /** How long a status event past a version gap waits for it. Default: REORDER_WAIT_MS (plan-order.ts). */
  reorderWaitMs?: number;
}

/** What the scheduler holds per merchant. */
interface MerchantSlot {
  /** Its runs of batches (`#runBatches`), each in a batch slot of its own. */
  runs: number;
  /** Its batches that are running; those still fetching take more rows (`OrderBatch.join`). */
  batches: Set<OrderBatch>;
  /** Not to be tried before this time (Date.now(): paused by a 429, or its last batch failed). */
  notBefore: number;
}

/**
 * Works sync.order_refresh outside graphile-worker, in batches ({@link OrderBatch}): a batch claims what its
 * merchant has queued and no other batch is fetching. It is the one owner of the batches' scheduling state:
 * which merchants are wanted, each merchant's running batches and hold-off, the batch slots and the shared
 * bounds (fetch slots, the applier).
 *
 * Woken by the NOTIFY of whoever queued orders (the inbox, process_events), whose payload names the
 * merchants, by its own finished batches, and by a poll that reads the queue (so does a NOTIFY without
 * names). A merchant named while batches of it run gets another one at once, up to `concurrency` in all;
 * past that, a batch of it that is still fetching takes the rows (a join): an event never waits for an
 * unrelated order's fetch (rows of an order another batch is fetching are tried again shortly after). A
 * paused merchant or a failed batch's merchant is left alone until the next poll, so nothing spins. Every
 * batch's steps are reported on {@link events}. Why not graphile-worker jobs: docs/decisions.md, "Orders are
 * refreshed outside graphile-worker".
 */
export class OrderScheduler {
  /** The batches' events (claimed, joined, committed, ended), for metrics, logs and tests. */
  readonly events = new EventEmitter<OrderBatchEvents>();
  readonly #ctx: WorkerContext;
  readonly #concurrency: number;
  readonly #pollIntervalMs: number;
  readonly #joinMs: number | undefined;
  readonly #listFetchMin: number | undefined;
  readonly #bulkReads: (() => boolean) | undefined;
  readonly #reorderWaitMs: number | undefined;
  readonly #applier: OrderApplier;
  readonly #fetchSlots: LimitFunction;
  readonly #abort = new AbortController();
  readonly #merchants = new Map<string, MerchantSlot>();
  /** Merchants with orders queued since their last batch started, in the order they were named. */
  readonly #wanted = new Set<string>();
  /** Each merchant's run of batches (`#runBatches`): one per batch slot taken. */
  readonly #running = new Set<Promise<void>>();
  #nextBatchId = 1;
  /** The next scan reads the queue (a poll, a NOTIFY without names, a scan that failed). */
  #scanQueue = true;
  /** A scan is queued (setImmediate). */
  #scheduled = false;
  /** One scan at a time; a scan asked for while one runs is one more pass after it. */
  readonly #scans = coalescing(async () => {
    await this.#scan();
    return this.#stopping ? "done" : undefined;
  });
  /** Its life: started (listening, polling), then stopping (no batch starts, running ones finish). */
  #life:
    | { name: "new" }
    | { name: "started"; poller: NodeJS.Timeout; unlisten: () => Promise<void> }
    | { name: "stopping" } = { name: "new" };
  get #stopping(): boolean {
    return this.#life.name === "stopping";
  }

  constructor(
    ctx: WorkerContext,
    {
      concurrency = 8,
      pollIntervalMs = 1000,
      joinMs,
      listFetchMin,
      bulkReads,
      reorderWaitMs,
    }: OrderSchedulerOptions = {},
  ) {
    if (!Number.isInteger(concurrency) || concurrency < 1) {
      throw new RangeError(
        `OrderScheduler: concurrency must be a whole number of at least 1, got ${concurrency}`,
      );
    }
    this.#ctx = ctx;
    this.#concurrency = concurrency;
    this.#pollIntervalMs = pollIntervalMs;
    this.#joinMs = joinMs;
    this.#listFetchMin = listFetchMin;
    this.#bulkReads = bulkReads;
    this.#reorderWaitMs = reorderWaitMs;
    this.#applier = createOrderApplier(ctx);
    this.#fetchSlots = pLimit(concurrency * ORDER_FETCH_CONCURRENCY);
  }

  /** Starts listening and polling; resolves once the listener is up. */
  async start(): Promise<void> {
    // On (re)connect the queue is read: NOTIFYs sent while the listener was away are lost.
    const listener = await this.#ctx.sql.listen(
      ORDER_REFRESH_CHANNEL,
      (payload) => this.#onNotify(payload),
      () => this.#poll(),
    );
    // Stopped while the listener came up: nothing to start.
    if (this.#stopping) return await listener.unlisten();
    const poller = setInterval(() => this.#poll(), this.#pollIntervalMs);
    poller.unref();
    this.#life = { name: "started", poller, unlisten: () => listener.unlisten() };
    this.#poll();
  }

  /** Order fetches waiting for one of the worker's fetch slots. */
  get fetchesWaiting(): number {
    return this.#fetchSlots.pendingCount;
  }

  /** Stops starting batches; running ones finish, or are aborted (their claims roll back) after `abortAfterMs`. */
  async stop(abortAfterMs: number): Promise<void> {
    const life = this.#life;
    this.#life = { name: "stopping" };
    if (life.name === "started") {
      clearInterval(life.poller);
      await life.unlisten().catch(() => {});
    }
    const abortTimer = setTimeout(() => this.#abort.abort(), abortAfterMs);
    await Promise.allSettled([...this.#running]);
    clearTimeout(abortTimer);
  }

  #slot(merchantId: string): MerchantSlot {
    let slot = this.#merchants.get(merchantId);
    if (!slot) {
      slot = { runs: 0, batches: new Set(), notBefore: 0 };
      this.#merchants.set(merchantId, slot);
    }
    return slot;
  }

  #want(merchantId: string): void {
    this.#wanted.add(merchantId);
    this.#schedule();
  }

  #onNotify(payload: string): void {
    const merchants = parseMerchants(payload);
    if (merchants) for (const merchantId of merchants) this.#wanted.add(merchantId);
    else this.#scanQueue = true;
    this.#schedule();
  }

  #poll(): void {
    this.#scanQueue = true;
    this.#schedule();
  }

  #schedule(): void {
    if (this.#stopping || this.#scheduled) return;
    this.#scheduled = true;
    setImmediate(() => {
      this.#scheduled = false;
      void this.#scans.run();
    });
  }

  /** Gives each wanted merchant a batch slot, or a join of its running batch, or leaves it wanted. */
  async #scan(): Promise<void> {
    try {
      if (this.#scanQueue) {
        this.#scanQueue = false;
        for (const merchantId of await queuedMerchants(this.#ctx.sql)) this.#wanted.add(merchantId);
      }
      const now = Date.now();
      for (const merchantId of this.#wanted) {
        if (this.#stopping) break;
        const slot = this.#slot(merchantId);
        // Held back: the poll's scan brings it back.
        if (slot.notBefore > now) {
          this.#wanted.delete(merchantId);
          continue;
        }
        if (this.#running.size < this.#concurrency) {
          this.#wanted.delete(merchantId);
          slot.runs++;
          const run = this.#runBatches(merchantId, slot).finally(() => {
            this.#running.delete(run);
            // Forgotten once idle and free to be tried: the map holds only merchants being worked on.
            if (--slot.runs === 0 && slot.notBefore <= Date.now()) this.#merchants.delete(merchantId);
            this.#schedule();
          });
          this.#running.add(run);
          continue;
        }
        // No free slot: a batch of the merchant that is still fetching takes the rows; else it waits.
        for (const batch of slot.batches) {
          if (batch.join()) {
            this.#wanted.delete(merchantId);
            break;
          }
        }
      }
    } catch (error) {
      this.#scanQueue = true;
      this.#ctx.logger.warn(
        { error: String(error) },
        "order refresher could not read its queue; retrying on the next poll",
      );
    }
  }

  /** Batches of one merchant until one leaves nothing behind it (a full batch comes back at once). */
  async #runBatches(merchantId: string, slot: MerchantSlot): Promise<void> {
    const { metrics, logger } = this.#ctx;
    try {
      for (;;) {
        const stopTimer = metrics.jobSeconds.startTimer({ task: "refresh_orders" });
        const batch = new OrderBatch(this.#ctx, {
          ref: { id: this.#nextBatchId++, merchantId },
          applier: this.#applier,
          fetchSlots: this.#fetchSlots,
          signal: this.#abort.signal,
          events: this.events,
          joinMs: this.#joinMs,
          listFetchMin: this.#listFetchMin,
          bulkReads: this.#bulkReads,
          reorderWaitMs: this.#reorderWaitMs,
        });
        slot.batches.add(batch);
        const result = await batch.run().finally(() => slot.batches.delete(batch));
        stopTimer();
        if (result.pausedUntil) slot.notBefore = result.pausedUntil.getTime();
        // Those rows get no NOTIFY of their own once the other batch ends (it may be another process's).
        if (result.heldElsewhere) setTimeout(() => this.#want(merchantId), HELD_RETRY_MS).unref();
        // Events waiting for a version gap: fetched once their wait is over, unless the gap fills first.
        if (result.holdUntil !== undefined) {
          setTimeout(() => this.#want(merchantId), result.holdUntil - performance.now()).unref();
        }
        if (result.rows === 0) break;
        metrics.jobs.inc({ task: "refresh_orders", result: "success" });
        logger.debug({ merchantId, rows: result.rows }, "Completed order batch");
        if (!result.more || this.#stopping) break;
      }
    } catch (error) {
      if (!this.#abort.signal.aborted) {
        metrics.jobs.inc({ task: "refresh_orders", result: "error" });
        logger.warn(
          { merchantId, error: String(error) },
          "order refresh batch failed; its claim rolled back, retried on the next poll",
        );
        slot.notBefore = Date.now() + this.#pollIntervalMs;
      }
    }
  }
}

/** Starts an {@link OrderScheduler}. */
export async function startOrderScheduler(
  ctx: WorkerContext,
  options: OrderSchedulerOptions = {},
): Promise<OrderScheduler> {
  const scheduler = new OrderScheduler(ctx, options);
  await scheduler.start();
  return scheduler;
}

/** The merchants with queued orders, oldest first. */
async function queuedMerchants(sql: Sql): Promise<string[]> {
  const rows = await sql<{ merchant_id: string }[]>`
    select merchant_id from sync.order_refresh where not_before is null or not_before <= now()
    group by merchant_id order by min(id)`;
  return rows.map((r) => r.merchant_id);
}

/** The merchants a NOTIFY payload names (`["mer_1", …]`); undefined when it names none or is not that. */
export function parseMerchants(payload: string): string[] | undefined {
  if (payload === "") return undefined;
  try {
    const merchants: unknown = JSON.parse(payload);
    if (
      Array.isArray(merchants) &&
      merchants.length > 0 &&
      merchants.every((m) => typeof m === "string" && m !== "")
    )
      return merchants as string[];
  } catch {
    // Not ours to understand: read the queue instead.
  }
  return undefined;
}
