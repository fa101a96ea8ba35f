import { ORDER_REFRESH_CHANNEL, type Sql } from "@loops-sync/db";
import pLimit from "p-limit";
import type { WorkerContext } from "../worker-context.ts";
import { createOrderApplier } from "./order-applier.ts";
import { ORDER_FETCH_CONCURRENCY } from "./order-batch-options.ts";
import { refreshOrderBatch } from "./refresh-order-batch.ts";

export interface OrderRefresherOptions {
  /** Batches run at once by this process (each holds one pooled connection while it fetches). Default: 8. */
  concurrency?: number;
  /** Looks for queued orders this often even without a NOTIFY (one lost while reconnecting). Default: 1000 ms. */
  pollIntervalMs?: number;
  /**
   * Fetched orders are committed as they arrive, on a pooled connection besides the batches' (false: each
   * batch applies its orders in its own transaction, at its end, for a pool the batches fill). Default: true.
   */
  applyAsFetched?: boolean;
}

/** A batch that left rows to another batch holding their orders tries them again this much later. */
const HELD_RETRY_MS = 50;

export interface OrderRefresher {
  /** Stops starting batches; running ones finish, or are aborted (their claims roll back) after `abortAfterMs`. */
  stop(abortAfterMs: number): Promise<void>;
}

/**
 * Works sync.order_refresh outside graphile-worker, in batches (`refreshOrderBatch`): a batch claims what
 * its merchant has queued and no other batch is fetching. Woken by the NOTIFY of whoever queued orders (the
 * inbox, process_events), whose payload names the merchants, by its own finished batches, and by a poll
 * that reads the queue (so does a NOTIFY without names). A merchant named while batches of it run gets
 * another one at once, up to `concurrency` in all; past that, a batch of it that is still fetching takes the
 * rows (a join): an event never waits for an unrelated order's fetch (rows of an order another batch is
 * fetching are tried again shortly after). Fetched orders are committed by one shared applier as they
 * arrive, and the calls in flight are bounded for the whole worker. A paused merchant or a failed batch's
 * merchant is left alone until the next poll, so nothing spins. Why not graphile-worker jobs, and how the
 * pieces fit: docs/decisions.md, "Orders are refreshed outside graphile-worker" and the records after it.
 */
export async function startOrderRefresher(
  ctx: WorkerContext,
  { concurrency = 8, pollIntervalMs = 1000, applyAsFetched = true }: OrderRefresherOptions = {},
): Promise<OrderRefresher> {
  if (!Number.isInteger(concurrency) || concurrency < 1) {
    throw new RangeError(
      `startOrderRefresher: concurrency must be a whole number of at least 1, got ${concurrency}`,
    );
  }
  const { sql, logger, metrics } = ctx;
  const applier = applyAsFetched ? createOrderApplier(ctx) : undefined;
  const fetchSlots = pLimit(concurrency * ORDER_FETCH_CONCURRENCY);
  const running = new Set<Promise<void>>();
  /** Merchants with orders queued since their last batch started, in the order they were named. */
  const wanted = new Set<string>();
  let scanQueue = true;
  /** How to hand more rows to each merchant's batches that are still fetching (see OrderBatchOptions). */
  const joins = new Map<string, Set<() => boolean>>();
  /** Merchants not to try before the given time (paused by a 429, or their last batch failed). */
  const notBefore = new Map<string, number>();
  const abort = new AbortController();
  let stopping = false;
  let scanning = false;
  let again = false;
  let scheduled = false;

  const want = (merchantId: string) => {
    wanted.add(merchantId);
    schedule();
  };
  const onNotify = (payload: string) => {
    const merchants = parseMerchants(payload);
    if (merchants) for (const merchantId of merchants) wanted.add(merchantId);
    else scanQueue = true;
    schedule();
  };
  const poll = () => {
    scanQueue = true;
    schedule();
  };
  const schedule = () => {
    if (stopping || scheduled) return;
    scheduled = true;
    setImmediate(() => {
      scheduled = false;
      void scan();
    });
  };

  async function scan(): Promise<void> {
    if (scanning) {
      again = true;
      return;
    }
    scanning = true;
    try {
      do {
        again = false;
        if (scanQueue) {
          scanQueue = false;
          for (const merchantId of await queuedMerchants(sql)) wanted.add(merchantId);
        }
        const now = Date.now();
        for (const merchantId of wanted) {
          if (stopping) break;
          // Held back: the poll's scan brings it back.
          if ((notBefore.get(merchantId) ?? 0) > now) {
            wanted.delete(merchantId);
            continue;
          }
          if (running.size < concurrency) {
            wanted.delete(merchantId);
            const batch = runBatches(merchantId).finally(() => {
              running.delete(batch);
              schedule();
            });
            running.add(batch);
            continue;
          }
          // No free slot: a batch of the merchant that is still fetching takes the rows; else it waits.
          for (const join of joins.get(merchantId) ?? []) {
            if (join()) {
              wanted.delete(merchantId);
              break;
            }
          }
        }
      } while (again && !stopping);
    } catch (error) {
      scanQueue = true;
      logger.warn(
        { error: String(error) },
        "order refresher could not read its queue; retrying on the next poll",
      );
    } finally {
      scanning = false;
    }
  }

  /** Batches of one merchant until one leaves nothing behind it (a full batch comes back at once). */
  async function runBatches(merchantId: string): Promise<void> {
    try {
      for (;;) {
        const stopTimer = metrics.jobSeconds.startTimer({ task: "refresh_orders" });
        let joinable: (() => boolean) | undefined;
        const result = await refreshOrderBatch(ctx, {
          merchantId,
          applier,
          fetchSlots,
          signal: abort.signal,
          onJoinable: (join) => {
            if (joinable) joins.get(merchantId)?.delete(joinable);
            joinable = join;
            if (join) joins.set(merchantId, (joins.get(merchantId) ?? new Set()).add(join));
            else if (joins.get(merchantId)?.size === 0) joins.delete(merchantId);
          },
        });
        stopTimer();
        if (result.pausedUntil) notBefore.set(merchantId, result.pausedUntil.getTime());
        // Those rows get no NOTIFY of their own once the other batch ends (it may be another process's).
        if (result.heldElsewhere) setTimeout(() => want(merchantId), HELD_RETRY_MS).unref();
        if (result.rows === 0) break;
        metrics.jobs.inc({ task: "refresh_orders", result: "success" });
        logger.debug({ merchantId, rows: result.rows }, "Completed order batch");
        if (!result.more || stopping) break;
      }
    } catch (error) {
      if (!abort.signal.aborted) {
        metrics.jobs.inc({ task: "refresh_orders", result: "error" });
        logger.warn(
          { merchantId, error: String(error) },
          "order refresh batch failed; its claim rolled back, retried on the next poll",
        );
        notBefore.set(merchantId, Date.now() + pollIntervalMs);
      }
    }
  }

  // On (re)connect the queue is read: NOTIFYs sent while the listener was away are lost.
  const listener = await sql.listen(ORDER_REFRESH_CHANNEL, onNotify, poll);
  const poller = setInterval(poll, pollIntervalMs);
  poller.unref();
  poll();

  return {
    async stop(abortAfterMs) {
      stopping = true;
      clearInterval(poller);
      await listener.unlisten().catch(() => {});
      const abortTimer = setTimeout(() => abort.abort(), abortAfterMs);
      await Promise.allSettled([...running]);
      clearTimeout(abortTimer);
    },
  };
}

/** The merchants with queued orders, oldest first. */
async function queuedMerchants(sql: Sql): Promise<string[]> {
  const rows = await sql<{ merchant_id: string }[]>`
    select merchant_id from sync.order_refresh group by merchant_id order by min(id)`;
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
