import type { EventEmitter } from "node:events";
import { type ApplyOrderResult, classifyUpstreamFailure } from "@loops-sync/replica";
import type { WorkerContext } from "../worker-context.ts";
import type { BatchRef, Fetched, OrderBatchEvents } from "./batch-value.ts";
import type { Claimed } from "./claim-orders.ts";
import { observeCommitted } from "./observe-order-stage.ts";

/** Where an order's commit is told: its batch, the worker's metrics, the scheduler's events. */
export interface CommitTarget {
  ref: BatchRef;
  metrics: WorkerContext["metrics"];
  events: EventEmitter<OrderBatchEvents>;
}

/** An order written by the applier, and when its answer was in (performance.now(); its commit stage starts). */
export interface Committed {
  applied: ApplyOrderResult;
  fetchedAt: number;
}

/**
 * One order's commit step, whichever way its content came (a single read, a list page, an event's payload):
 * runs `commit`, then observes the commit stage and the lag, tells the scheduler (`committed`) and answers the
 * batch. A commit that throws (the database refused the row, or gave up waiting for a lock) is a failed apply,
 * retried by the order's own job like a failed fetch. Undefined when `commit` wrote nothing and says so (the
 * caller goes on, e.g. to fetch the order instead): nothing is observed or told then.
 */
export async function commitOrder(
  target: CommitTarget,
  claim: Claimed,
  commit: () => Promise<Committed | undefined>,
): Promise<Fetched | undefined> {
  try {
    const committed = await commit();
    if (!committed) return undefined;
    observeCommitted(target.metrics, claim, committed.fetchedAt);
    target.events.emit("committed", {
      batch: target.ref,
      orderId: claim.order_id,
      applied: committed.applied,
    });
    return { kind: "applied", claim, applied: committed.applied };
  } catch (error) {
    target.events.emit("committed", { batch: target.ref, orderId: claim.order_id, error });
    return { kind: "failed", claim, failure: classifyUpstreamFailure(error), error, stage: "apply" };
  }
}
