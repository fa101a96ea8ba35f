// For `loops-sync forward retry` and `forward recover`: two of the forwarder's delivery transitions.
export {
  type RecoverRefusal,
  type RecoverResult,
  type RetryResult,
  recoverDeliveries,
  retryDeliveries,
} from "./forwarding/delivery-transitions.ts";
// For `loops-sync doctor`'s forwarding check, which sends one signed test change.
export { sendChange } from "./forwarding/send-change.ts";
export {
  type Forwarder,
  type ForwarderOptions,
  startForwarder,
} from "./forwarding/start-forwarder.ts";
// For the gateway on the receiver's admin listener: a write Loops accepted, applied to the mirror.
export { createWriteMirror, type GatewayWrite } from "./gateway/mirror-write.ts";
export {
  type CatchupJobOptions,
  type PruneJobOptions,
  type WorkerJobs,
  workerJobs,
} from "./jobs/worker-jobs.ts";
export type { BatchRef, OrderBatchEvents, OrderBatchResult } from "./orders/batch-value.ts";
// For bench/apply-batch-probe.ts, which times one order's write with its events resolved.
export { resolveOrderEvents } from "./orders/resolve-order-events.ts";
export { cutoffBefore } from "./prune-task.ts";
export {
  type MerchantReconcileResult,
  type ReconcileRun,
  type RunReconcileOptions,
  runReconcile,
} from "./reconcile/run-reconcile.ts";
export { type RunningWorker, type StartWorkerOptions, startWorker } from "./start-worker.ts";
export { createWorkerMetrics, type WorkerMetrics } from "./worker-metrics.ts";
