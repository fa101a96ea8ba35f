import { pipelinedTransaction, planForCurrentSize } from "@loops-sync/db";
import { coalescing } from "@loops-sync/loops-client";
import type { ApplyOrderResult, OrderInput, StatusChain } from "@loops-sync/replica";
import type { WorkerContext } from "../worker-context.ts";
import { countApplied, type FetchedOrder, sendFetchedOrders } from "./apply-fetched-orders.ts";

/** Orders one commit takes at most; the rest go in the next. */
export const APPLY_GROUP_ORDERS = 200;
/**
 * How long a commit waits for a row lock before it gives up: its orders fail (each batch hands them to their
 * own refresh_order jobs and commits, which frees what it holds). A lock held by a transaction that itself
 * waits for one of those batches would otherwise be a deadlock Postgres cannot see: the batch's wait for
 * this commit is in the worker.
 */
export const APPLY_LOCK_TIMEOUT_MS = 2000;
/** SQLSTATE lock_not_available: the lock timeout expired. */
const LOCK_NOT_AVAILABLE = "55P03";

export interface OrderApplier {
  /**
   * Applies a fetched order (version-gated, {@link applyOrdersIfNewer}) and settles the events that queued
   * it; resolves once that is committed, with what the replica holds now. Orders handed in while a commit
   * runs share the next one (group commit), so an order is readable one commit after its answer arrives,
   * not when the slowest answer of its batch does. `receivedBefore`: when the fetch of `order` started,
   * on Postgres's clock (the order batch passes its claim's start); an event without a version is covered
   * only if received before it. Default: none (such an event stays pending).
   */
  apply(order: OrderInput, eventIds: readonly string[], receivedBefore?: Date): Promise<ApplyOrderResult>;
  /**
   * Applies status events from their payloads ({@link applyStatusFromEvents}) in the same group commits, and
   * settles `eventIds`; `changed` is false when the gate refused the chain (the stored row moved).
   */
  applyChain(
    chain: StatusChain,
    eventIds: readonly string[],
    receivedBefore?: Date,
  ): Promise<ApplyOrderResult>;
}

/**
 * One per worker process, shared by its order batches. Its transactions touch the replica, sync.events
 * and graphile-worker's jobs, never sync.order_refresh nor an advisory lock (what an open batch holds while
 * it waits here), so a batch never waits on a commit that waits on it; a wait for a lock that another
 * transaction holds longer than APPLY_LOCK_TIMEOUT_MS fails the group instead. One commit runs at a time
 * (docs/decisions.md, "Fetched orders are committed as they arrive"), on a pooled connection that the waiting batches
 * must leave free (startWorker sizes both).
 */
export function createOrderApplier(ctx: Pick<WorkerContext, "sql" | "metrics" | "logger">): OrderApplier {
  const { sql, logger } = ctx;
  let queued: (FetchedOrder & { resolve(r: ApplyOrderResult): void; reject(e: unknown): void })[] = [];

  // Two round trips: BEGIN, the lock timeout, the plan mode and the apply go out together; the settle, the locations
  // check and COMMIT go out together once the apply has answered (docs/decisions.md, "The applier's commit
  // in two round trips").
  const commit = (group: readonly FetchedOrder[]) =>
    pipelinedTransaction(sql, async (tx) => {
      const timeout = tx`select set_config('lock_timeout', ${`${APPLY_LOCK_TIMEOUT_MS}ms`}, true)`.execute();
      // Handled at once: if the connection breaks, the apply's failure is what is reported (no tail then).
      timeout.catch(() => {});
      // The apply and the settle look events up by id: planned for sync.events as it is now.
      const planned = planForCurrentSize(tx);
      const sent = await sendFetchedOrders(tx, group);
      return { result: sent, tail: [timeout, planned, ...sent.tail] };
    }).then(async (sent) => {
      const done = { applied: sent.applied, changes: sent.changes, outcomes: await sent.outcomes };
      countApplied(ctx, done);
      return done.applied;
    });

  async function run(group: typeof queued): Promise<void> {
    try {
      const results = await commit(group);
      for (const [i, e] of group.entries()) e.resolve(results[i]!);
    } catch (error) {
      if (group.length === 1 || (error as { code?: string }).code === LOCK_NOT_AVAILABLE) {
        if (group.length > 1) {
          logger.warn(
            { orders: group.length, error: String(error) },
            "a commit of fetched orders waited too long for a lock; each is retried by its own job",
          );
        }
        for (const e of group) e.reject(error);
        return;
      }
      // One order the database refuses must not fail its neighbours' batches: each alone, once.
      logger.warn(
        { orders: group.length, error: String(error) },
        "applying a group of orders failed; applying them one by one",
      );
      for (const e of group) {
        await commit([e]).then(
          ([result]) => e.resolve(result!),
          (alone: unknown) => e.reject(alone),
        );
      }
    }
  }

  // One group commit at a time; orders queued meanwhile go in the next group.
  const commits = coalescing(async () => {
    if (queued.length === 0) return "done";
    const group = queued.slice(0, APPLY_GROUP_ORDERS);
    queued = queued.slice(group.length);
    await run(group);
    return "more";
  });
  const start = () => void commits.run();

  return {
    apply(order, eventIds, receivedBefore) {
      return new Promise<ApplyOrderResult>((resolve, reject) => {
        queued.push({ order, eventIds, receivedBefore, resolve, reject });
        start();
      });
    },
    applyChain(chain, eventIds, receivedBefore) {
      return new Promise<ApplyOrderResult>((resolve, reject) => {
        queued.push({ chain, eventIds, receivedBefore, resolve, reject });
        start();
      });
    },
  };
}
