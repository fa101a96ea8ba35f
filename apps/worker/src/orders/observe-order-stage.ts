import type { WorkerContext } from "../worker-context.ts";
import type { Claimed } from "./claim-orders.ts";

/** Observes a stage that started at `since` (performance.now()) and ends now; returns now. */
export function observeStage(
  metrics: WorkerContext["metrics"],
  stage: "fetch" | "commit",
  since: number,
): number {
  const now = performance.now();
  metrics.orderRefreshStage.observe({ stage }, (now - since) / 1000);
  return now;
}

/** A fetched order is committed: its commit stage, and its lag from the event's queue row to now. */
export function observeCommitted(metrics: WorkerContext["metrics"], claim: Claimed, fetchedAt: number): void {
  const now = observeStage(metrics, "commit", fetchedAt);
  metrics.orderRefreshLag.observe(claim.queued_seconds + (now - claim.taken_at) / 1000);
}
