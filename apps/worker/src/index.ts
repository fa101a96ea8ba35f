export { classifyUpstreamFailure, type UpstreamFailure } from "@loops-sync/replica";
export { type EventOutcome, type Outcome, settleEvents } from "./eventOutcomes.ts";
export type { LoopsApi, MerchantApi } from "./loopsApi.ts";
export { createOrderApplier, type OrderApplier } from "./orders/order-applier.ts";
export { orderJobKey, UpstreamBehindError } from "./orders/refresh-order-task.ts";
export { resolveOrderEvents, settleOrderEvents } from "./orders/settle-order-events.ts";
export { createPoolRegistry, type PoolRegistry } from "./poolRegistry.ts";
export { type EventRoute, routeEvent } from "./routeEvent.ts";
export { type RunningWorker, type StartWorkerOptions, startWorker } from "./startWorker.ts";
export { type JobInput, type MenuInput, upsertJob, upsertMenu } from "./upsertJob.ts";
export {
  type ChannelConnectionInput,
  type ChannelInput,
  type LocationInput,
  replaceMerchantLocations,
  upsertChannels,
} from "./upsertLocations.ts";
export {
  type ConnectionInput,
  type MerchantInput,
  upsertConnection,
  upsertMerchant,
} from "./upsertMerchant.ts";
export { createWorkerMetrics, type WorkerMetrics } from "./workerMetrics.ts";
