export { createStatusPage, type StatusPageOptions } from "./create-status-page.ts";
export { type AttentionItem, needsAttention } from "./needs-attention.ts";
export { type MerchantPage, merchantLag, pageMerchants } from "./page-merchants.ts";
export { type MerchantBacklog, readBacklog } from "./read-backlog.ts";
export { type ChangeFeedStatus, readChangeFeed } from "./read-change-feed.ts";
export { type ConsumerStatus, readConsumers } from "./read-consumers.ts";
export { readEventsPerMinute } from "./read-events-per-minute.ts";
export {
  type DeadChange,
  FORWARD_OFF_AFTER_SECONDS,
  type ForwardingStatus,
  readForwarding,
} from "./read-forwarding.ts";
export { type GatewayWriteCount, readGatewayWrites } from "./read-gateway-writes.ts";
export {
  DEFAULT_JOB_RUN_LIMIT_SECONDS,
  JOB_RUN_LIMIT_SECONDS,
  type LockedTooLongJob,
  readLockedTooLong,
} from "./read-locked-too-long.ts";
export { readMerchantStatuses } from "./read-merchant-statuses.ts";
export { readQueueStatus } from "./read-queue-status.ts";
export { readRecoveryStatus } from "./read-recovery-status.ts";
export { readRequestBudgetStatus, readScheduledTicks } from "./read-scheduled-ticks.ts";
export { describeStandby, readStandby, type StandbyStatus } from "./read-standby.ts";
export { readSyncStatus } from "./read-sync-status.ts";
export { readTableSizes, type TableSize } from "./read-table-sizes.ts";
export { readUnhandledEvents } from "./read-unhandled-events.ts";
export { readWebhookDelivery, type WebhookDelivery } from "./read-webhook-delivery.ts";
export { redactSecrets } from "./redact-secrets.ts";
export { type ServedStatusPage, type ServeStatusPageOptions, serveStatusPage } from "./serve-status-page.ts";
export {
  EVENT_OUTCOMES,
  type EventMinute,
  type EventOutcome,
  type FailedJob,
  type MerchantSyncStatus,
  type OutcomeCounts,
  type QueueStatus,
  type RecoveryStatus,
  type RequestBudgetStatus,
  type ScheduledTickStatus,
  type SyncStatus,
  type UnhandledEventType,
  type UpstreamPauseStatus,
} from "./sync-status.ts";
