export { type AppliedPage, applyOrderPage } from "./applyOrderPage.ts";
export { type BackfillCheckpoint, readBackfillCheckpoint } from "./backfillCheckpoint.ts";
export type { CatchupApi, CatchupMerchantApi } from "./catchupApi.ts";
export { CatchupError, type CatchupErrorCode, describeError } from "./catchupError.ts";
export type { CatchupProgress, MerchantCatchupResult } from "./catchupMerchant.ts";
export {
  type CatchupPayload,
  type CatchupTaskOptions,
  catchupCrontab,
  catchupTasks,
  scheduleCatchup,
} from "./catchupTasks.ts";
export {
  compareOrder,
  type DifferenceKind,
  describeDifference,
  type OrderDifference,
  type OrderState,
} from "./compareOrders.ts";
export { type EventCursor, readEventCursor } from "./eventCursor.ts";
export { listActiveMerchants } from "./listMerchants.ts";
export { repairOrder } from "./repairOrder.ts";
export {
  type BackfillProgress,
  type BackfillResult,
  type RunBackfillOptions,
  runBackfill,
  WATERMARK_MARGIN_MS,
} from "./runBackfill.ts";
export { type CatchupResult, type RunCatchupOptions, runCatchup } from "./runCatchup.ts";
export {
  type MerchantVerifyResult,
  type VerifyReplicaOptions,
  type VerifyResult,
  verifyReplica,
} from "./verifyReplica.ts";
