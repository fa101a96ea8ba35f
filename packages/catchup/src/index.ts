export { type AppliedPage, applyOrderPage } from "./apply-order-page.ts";
export { type BackfillCheckpoint, readBackfillCheckpoint } from "./backfill-checkpoint.ts";

export { type CatchupErrorCode, catchupError, describeError } from "./catchup-error.ts";
export type { CatchupProgress, MerchantCatchupResult } from "./catchup-merchant.ts";
export {
  type CatchupPayload,
  type CatchupTaskOptions,
  catchupCrontab,
  catchupTasks,
  scheduleCatchup,
} from "./catchup-tasks.ts";
export {
  compareOrder,
  type DifferenceKind,
  describeDifference,
  type OrderDifference,
  type OrderState,
} from "./compare-order.ts";
export { type EventCursor, readEventCursor } from "./event-cursor.ts";
export { findUncoveredOrders, type PageOrders, type UncoveredOrder } from "./find-uncovered-orders.ts";
export { listActiveMerchants } from "./list-active-merchants.ts";
export { repairOrder } from "./repair-order.ts";
export {
  type BackfillProgress,
  type BackfillResult,
  type RunBackfillOptions,
  runBackfill,
  WATERMARK_MARGIN_MS,
} from "./run-backfill.ts";
export { type CatchupResult, type RunCatchupOptions, runCatchup } from "./run-catchup.ts";
export {
  type MerchantVerifyResult,
  type VerifyReplicaOptions,
  type VerifyResult,
  verifyReplica,
} from "./verify-replica.ts";
