import { ORDER_REFRESH_CHANNEL, type Sql } from "@loops-sync/db";
import { refreshOrderBatch } from "./refreshOrders.ts";
import type { WorkerContext } from "./workerContext.ts";

export interface OrderRefresherOptions {
  /** Lanes worked at once by this process (each batch holds one pooled connection). Default: 8. */
  concurrency?: number;
  /** Looks for queued orders this often even without a NOTIFY (one lost while reconnecting). Default: 1000 ms. */
  pollIntervalMs?: number;
}

export interface OrderRefresher {
  /** Stops taking lanes; running batches finish, or are aborted (their claims roll back) after `abortAfterMs`. */
  stop(abortAfterMs: number): Promise<void>;
}

/**
 * Works sync.order_refresh outside graphile-worker: a batch per merchant lane (`refreshOrderBatch`), woken by
 * the NOTIFY of whoever queued orders (the inbox, process_events), by its own finished batches, and by a
 * poll. A lane another process holds, a failed batch or a paused merchant is left alone until the next poll,
 * so nothing spins. Why not a graphile-worker job per lane: docs/decisions.md, "Batched order refreshes".
 */
export async function startOrderRefresher(
  ctx: WorkerContext,
  { concurrency = 8, pollIntervalMs = 1000 }: OrderRefresherOptions = {},
): Promise<OrderRefresher> {
  if (!Number.isInteger(concurrency) || concurrency < 1) {
    throw new RangeError(
      `startOrderRefresher: concurrency must be a whole number of at least 1, got ${concurrency}`,
    );
  }
  const { sql, logger, metrics } = ctx;
  const running = new Map<string, Promise<void>>();
  /** Lanes (`<merchant>:<lane>`) and merchants (`merchant:<id>`) not to try before the given time. */
  const notBefore = new Map<string, number>();
  const abort = new AbortController();
  let stopping = false;
  let scanning = false;
  let again = false;
  let scheduled = false;

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
        if (running.size >= concurrency) break;
        const lanes = await queuedLanes(sql);
        const now = Date.now();
        for (const { merchant_id: merchantId, lane } of lanes) {
          if (stopping || running.size >= concurrency) break;
          const key = `${merchantId}:${lane}`;
          if (running.has(key)) continue;
          if ((notBefore.get(key) ?? 0) > now || (notBefore.get(`merchant:${merchantId}`) ?? 0) > now)
            continue;
          running.set(key, runLane(merchantId, lane, key));
        }
      } while (again && !stopping);
    } catch (error) {
      logger.warn(
        { error: String(error) },
        "order refresher could not read its queue; retrying on the next poll",
      );
    } finally {
      scanning = false;
    }
  }

  async function runLane(merchantId: string, lane: number, key: string): Promise<void> {
    try {
      for (;;) {
        const stopTimer = metrics.jobSeconds.startTimer({ task: "refresh_orders" });
        const result = await refreshOrderBatch(ctx, merchantId, lane, abort.signal);
        stopTimer();
        if (result.pausedUntil) notBefore.set(`merchant:${merchantId}`, result.pausedUntil.getTime());
        if (result.rows === 0) {
          // Another process holds the lane: it drains it, and it hears the same NOTIFYs. An empty lane is
          // no reason to wait: a scan can list a lane whose rows a batch of ours claimed meanwhile, and the
          // next event queued there must not sit out a poll interval.
          if (result.heldElsewhere) notBefore.set(key, Date.now() + pollIntervalMs);
          break;
        }
        metrics.jobs.inc({ task: "refresh_orders", result: "success" });
        logger.debug({ merchantId, lane, rows: result.rows }, "Completed order batch");
        if (!result.more || stopping) break;
      }
    } catch (error) {
      if (!abort.signal.aborted) {
        metrics.jobs.inc({ task: "refresh_orders", result: "error" });
        logger.warn(
          { merchantId, lane, error: String(error) },
          "order refresh batch failed; its claim rolled back, retried on the next poll",
        );
        notBefore.set(key, Date.now() + pollIntervalMs);
      }
    } finally {
      running.delete(key);
      schedule();
    }
  }

  const listener = await sql.listen(ORDER_REFRESH_CHANNEL, schedule, schedule);
  const poll = setInterval(schedule, pollIntervalMs);
  poll.unref();
  schedule();

  return {
    async stop(abortAfterMs) {
      stopping = true;
      clearInterval(poll);
      await listener.unlisten().catch(() => {});
      const abortTimer = setTimeout(() => abort.abort(), abortAfterMs);
      await Promise.allSettled([...running.values()]);
      clearTimeout(abortTimer);
    },
  };
}

/** The (merchant, lane) pairs with queued orders, oldest first. */
async function queuedLanes(sql: Sql): Promise<{ merchant_id: string; lane: number }[]> {
  return await sql<{ merchant_id: string; lane: number }[]>`
    select merchant_id, lane from sync.order_refresh group by merchant_id, lane order by min(id)`;
}
