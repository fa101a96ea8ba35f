export { classifyUpstreamFailure, type UpstreamFailure } from "@loops-sync/replica";
export { type EventRoute, routeEvent } from "./events/route-event.ts";
export {
  type Claimed,
  claimDeliveries,
  FORWARD_CHANNEL,
  type RecoverRefusal,
  type RecoverResult,
  type RetryResult,
  recoverDeliveries,
  retryDeliveries,
  settleDeliveries,
} from "./forwarding/delivery-transitions.ts";
export { createForwardMetrics, type ForwardMetrics } from "./forwarding/forward-metrics.ts";
export { FORWARD_HEARTBEAT_MS } from "./forwarding/forwarder-heartbeat.ts";
export { parseRetryAfterMs } from "./forwarding/parse-retry-after.ts";
export { retryDelayMs } from "./forwarding/retry-delay.ts";
export { scanChanges, startForwarding } from "./forwarding/scan-changes.ts";
export { changeWebhookId, sendChange } from "./forwarding/send-change.ts";
export {
  describeEndpoint,
  type Forwarder,
  type ForwarderOptions,
  startForwarder,
} from "./forwarding/start-forwarder.ts";
export { createPoolRegistry, type PoolRegistry } from "./jobs/pool-registry.ts";
export { absorbLostCompletions, createQueuePool, type QueuePool } from "./jobs/queue-pool.ts";
export {
  type CatchupJobOptions,
  type PruneJobOptions,
  type WorkerJobs,
  workerJobs,
} from "./jobs/worker-jobs.ts";
export {
  type ConnectionInput,
  type MerchantInput,
  upsertConnection,
  upsertMerchant,
} from "./merchants/upsert-merchant.ts";
export { type JobInput, type MenuInput, upsertJob, upsertMenu } from "./mirror/upsert-job.ts";
export {
  type ChannelConnectionInput,
  type ChannelInput,
  type LocationInput,
  replaceMerchantLocations,
  upsertChannels,
} from "./mirror/upsert-locations.ts";
export type { BatchRef, OrderBatchEvents, OrderBatchResult } from "./orders/batch-value.ts";
export { createOrderApplier, type OrderApplier } from "./orders/order-applier.ts";
export { orderJobKey } from "./orders/refresh-order-task.ts";
export { resolveOrderEvents } from "./orders/resolve-order-events.ts";
export { cutoffBefore } from "./prune-task.ts";
export {
  type MerchantReconcile,
  reconcileMerchant,
} from "./reconcile/reconcile-merchant.ts";
export { RECONCILE_PRIORITY, refreshResourcesTask } from "./reconcile/refresh-resources-task.ts";
export {
  type MerchantReconcileResult,
  type ReconcileRun,
  type RunReconcileOptions,
  runReconcile,
} from "./reconcile/run-reconcile.ts";
export { type RunningWorker, type StartWorkerOptions, startWorker } from "./start-worker.ts";
export { createWorkerMetrics, type WorkerMetrics } from "./worker-metrics.ts";
