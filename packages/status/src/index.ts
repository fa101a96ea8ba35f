export { createStatusPage, StatusPageError, type StatusPageOptions } from "./createStatusPage.ts";
export { type AttentionItem, needsAttention } from "./needs-attention.ts";
export { readTableSizes, type TableSize } from "./read-table-sizes.ts";
export { type MerchantBacklog, readBacklog } from "./readBacklog.ts";
export { readEventsPerMinute } from "./readEventsPerMinute.ts";
export { readMerchantStatuses } from "./readMerchantStatuses.ts";
export { readQueueStatus } from "./readQueueStatus.ts";
export { readSyncStatus } from "./readSyncStatus.ts";
export { readWebhookDelivery, type WebhookDelivery } from "./readWebhookDelivery.ts";
export { redactSecrets } from "./redactSecrets.ts";
export { type ServedStatusPage, type ServeStatusPageOptions, serveStatusPage } from "./serveStatusPage.ts";
export {
  EVENT_OUTCOMES,
  type EventMinute,
  type EventOutcome,
  type FailedJob,
  type MerchantSyncStatus,
  type OutcomeCounts,
  type QueueStatus,
  type SyncStatus,
} from "./syncStatus.ts";
