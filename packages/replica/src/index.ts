export {
  type ApplyOrderResult,
  applyOrderIfNewer,
  applyOrdersIfNewer,
  inTransaction,
  type OrderProvenance,
} from "./apply-orders-if-newer.ts";
export { classifyUpstreamFailure, type UpstreamFailure } from "./classify-upstream-failure.ts";
export { DEFAULT_MAX_ATTEMPTS, enqueueJob, type JobSpec, rescheduleJob } from "./enqueue-job.ts";
export {
  MERCHANT_FLAG_PREFIX,
  type MerchantState,
  merchantFlag,
  merchantStatus,
  pausedMerchantFlags,
  pauseMerchant,
  readMerchantState,
  revokeMerchant,
} from "./merchant-state.ts";
export { checkOrder, InvalidOrderError, type OrderInput } from "./order-input.ts";
export {
  type ChangeInput,
  type ChangeResource,
  type ChangeSource,
  causedBy,
  orderChanges,
  type ResourceChange,
  recordChanges,
} from "./record-changes.ts";
export { runInLanes } from "./run-in-lanes.ts";
export {
  nextCronTick,
  type ScheduledTick,
  type StartTickOptions,
  startScheduledTick,
} from "./scheduled-tick.ts";
export {
  type OrderEventsToSettle,
  type OrderWrite,
  settleCoveredOrderEvents,
} from "./settle-covered-order-events.ts";
