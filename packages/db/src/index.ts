export {
  CHANGES_CHANNEL,
  type ChangeInput,
  type ChangeResource,
  type ChangeSource,
  type ResourceChange,
} from "./change-feed/change-feed.ts";
export { lowestChangeStillNeeded } from "./change-feed/changes-still-needed.ts";
export { causedBy, recordChanges } from "./change-feed/record-changes.ts";
export {
  type ConnectOptions,
  connect,
  describeConnectionError,
  type Sql,
  type TransactionSql,
} from "./connection/connect.ts";
export {
  isTransaction,
  type PipelinedWork,
  pipelinedTransaction,
} from "./connection/pipelined.ts";
export { planForCurrentSize } from "./connection/plan-for-current-size.ts";
export { type OpenPool, type PoolTracker, trackPools } from "./connection/pool-tracker.ts";
export { withTimeout } from "./connection/with-timeout.ts";
export {
  DbError,
  type DbErrorKind,
  type EmbeddedFailure,
  isDbError,
  type MigrationFailure,
  type RoleFailure,
} from "./db-error.ts";
export { type ResolvedDatabase, resolveDatabase } from "./embedded/database.ts";
export {
  type EmbeddedPostgres,
  type StartEmbeddedOptions,
  startEmbeddedPostgres,
} from "./embedded/embedded.ts";
export { nativeDir, relocatedBaseFor } from "./embedded/embedded-place.ts";
export {
  EVENT_OUTCOMES,
  type EventOutcome,
  type SettledOutcome,
  TERMINAL_OUTCOMES,
  type TerminalOutcome,
} from "./event-outcomes/event-outcomes.ts";
export { reopenEvents } from "./event-outcomes/reopen-events.ts";
export {
  type OrderEventsToSettle,
  type OrderWrite,
  settleCoveredOrderEvents,
} from "./event-outcomes/settle-covered-order-events.ts";
export {
  type RefreshedSettle,
  type SettledEvent,
  settleEvents,
  settleRefreshedEvents,
} from "./event-outcomes/settle-events.ts";
export {
  settleUnknownMerchantEvents,
  skipRevokedMerchantEvents,
} from "./event-outcomes/settle-merchant-events.ts";
export { settleOrderEvents } from "./event-outcomes/settle-order-events.ts";
export { storedOutcome } from "./event-outcomes/stored-outcome.ts";
export { type CreateConsumerOptions, createConsumer } from "./feed-consumers/create-consumer.ts";
export { dropConsumer } from "./feed-consumers/drop-consumer.ts";
export type { ConsumerFilter } from "./feed-consumers/feed-consumers.ts";
export { type ResetTo, resetConsumer } from "./feed-consumers/reset-consumer.ts";
export {
  type EventEnvelope,
  type EventSource,
  type StoreEventsOptions,
  type StoreEventsResult,
  storeEventsAndEnqueue,
} from "./inbox/inbox.ts";
export { orderIdOf } from "./inbox/order-id-of.ts";
export { type ConfirmedMerchant, confirmMerchant, refuseMerchant } from "./merchants/confirm-merchant.ts";
export { learnConfiguredMerchants, learnCreatedMerchant } from "./merchants/learn-merchants.ts";
export { markMerchantRevoked, reopenRevokedMerchant } from "./merchants/mark-merchant-revoked.ts";
export { pauseMerchant } from "./merchants/pause-merchant.ts";
export { recordActiveConnection } from "./merchants/record-active-connection.ts";
export { recordLocationsListing } from "./merchants/record-locations-listing.ts";
export { recordMerchantReconciled } from "./merchants/record-merchant-reconciled.ts";
export {
  MIGRATIONS_DIR,
  type MigrateOptions,
  type MigrateResult,
  type MigrationFile,
  migrate,
  pendingMigrations,
  readMigrations,
} from "./migrate.ts";
export { type MigrationStep, parseMigrationSteps } from "./migration-runner/migration-steps.ts";
export {
  type MigrationPlan,
  type PlannedStep,
  planMigrations,
  planSteps,
} from "./migration-runner/plan-migrations.ts";
export { FIRST_ONLINE_MIGRATION } from "./migration-runner/read-migrations.ts";
export type { StepReport } from "./migration-runner/run-online-migration.ts";
export {
  type Claimed,
  type ClaimedEvent,
  claimQueuedOrders,
  type QueueClaim,
} from "./order-queue/claim-queued-orders.ts";
export { dropQueuedOrders } from "./order-queue/drop-queued-orders.ts";
export { holdOrders } from "./order-queue/hold-orders.ts";
export { ORDER_REFRESH_CHANNEL, type QueuedOrder } from "./order-queue/order-queue.ts";
export { queueOrders } from "./order-queue/queue-orders.ts";
export {
  BUDGET_SLOT_MS,
  BUDGET_SLOTS_PER_SECOND,
  BUDGET_WINDOW_SLOTS,
  budgetSlotCap,
  budgetSlotInWindow,
} from "./request-budget/budget-slots.ts";
export {
  type RequestBudgetReading,
  readRequestBudget,
  readRequestBudgetState,
} from "./request-budget/read-request-budget.ts";
export {
  type RequestBudget,
  type RequestBudgetOptions,
  requestBudget,
} from "./request-budget/request-budget.ts";
export { type PruneOptions, type PruneResult, pruneFinished } from "./retention/prune.ts";
export {
  type GrantRoleRightsOptions,
  type GrantRoleRightsResult,
  grantRoleRights,
} from "./roles/grant-role-rights.ts";
export { GRANTABLE_RIGHTS, type GrantableRights, type RoleRights } from "./roles/role-rights.ts";
export {
  PROCESS_EVENTS_MAX_ATTEMPTS,
  payloadField,
  type TaskName,
  type TaskPayloads,
  taskName,
} from "./tasks.ts";
export { type UnstorableReason, unstorableReason } from "./unstorable-reason.ts";
