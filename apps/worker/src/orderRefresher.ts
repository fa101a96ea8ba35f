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
 * the NOTIFY of whoever queued orders (the inbox, process_events), whose payload names the lanes, by its
 * own finished batches, and by a poll that reads the queue (so does a NOTIFY without lanes). A lane named
 * while its batch runs is run again when that batch ends. A lane another process holds, a failed batch or a
 * paused merchant is left alone until the next poll, so nothing spins. Why not a graphile-worker job per
 * lane: docs/decisions.md, "Batched order refreshes".
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
  /** Lanes to run (`<merchant>:<lane>` → the pair), in the order they were named. */
  const wanted = new Map<string, { merchantId: string; lane: number }>();
  let scanQueue = true;
  /** Lanes (`<merchant>:<lane>`) and merchants (`merchant:<id>`) not to try before the given time. */
  const notBefore = new Map<string, number>();
  const abort = new AbortController();
  let stopping = false;
  let scanning = false;
  let again = false;
  let scheduled = false;

  const want = (merchantId: string, lane: number) =>
    wanted.set(`${merchantId}:${lane}`, { merchantId, lane });
  const onNotify = (payload: string) => {
    const lanes = parseLanes(payload);
    if (lanes) for (const [merchantId, lane] of lanes) want(merchantId, lane);
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
        if (running.size >= concurrency) break;
        if (scanQueue) {
          scanQueue = false;
          for (const { merchant_id, lane } of await queuedLanes(sql)) want(merchant_id, lane);
        }
        const now = Date.now();
        for (const [key, { merchantId, lane }] of wanted) {
          if (stopping || running.size >= concurrency) break;
          // Running: it stays wanted, and runs again when its batch ends (it may have missed these rows).
          if (running.has(key)) continue;
          wanted.delete(key);
          // Held back: the poll's scan brings it back.
          if ((notBefore.get(key) ?? 0) > now || (notBefore.get(`merchant:${merchantId}`) ?? 0) > now)
            continue;
          running.set(key, runLane(merchantId, lane, key));
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

/** The lanes a NOTIFY payload names (`[[merchant_id, lane], …]`); undefined when it names none or is not that. */
export function parseLanes(payload: string): [string, number][] | undefined {
  if (payload === "") return undefined;
  try {
    const lanes: unknown = JSON.parse(payload);
    if (
      Array.isArray(lanes) &&
      lanes.length > 0 &&
      lanes.every(
        (l) => Array.isArray(l) && l.length === 2 && typeof l[0] === "string" && Number.isInteger(l[1]),
      )
    )
      return lanes as [string, number][];
  } catch {
    // Not ours to understand: read the queue instead.
  }
  return undefined;
}
