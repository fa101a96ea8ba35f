export {
  CHANGE_RESOURCES,
  CHANGE_SOURCES,
  CHANGES_CHANNEL,
  type ChangeResource,
  type ChangeSource,
  CONSUMER_NAME_PATTERN,
} from "./change-feed.ts";
export {
  type ChangeHandler,
  CONSUMER_ACKS_CHANNEL,
  type ConsumeChangesOptions,
  consumeChanges,
} from "./consume-changes.ts";
export type * from "./database.ts";
export { type FollowChangesOptions, followChanges } from "./follow-changes.ts";
export {
  kyselyOver,
  POSTGRES_TYPES,
  PostgresJsDialect,
  type PostgresJsHandle,
} from "./postgres-js-dialect.ts";
export {
  CHANGES_EXPIRED_SQLSTATE,
  type Change,
  ChangesExpiredError,
  DEFAULT_CHANGES_LIMIT,
  type ReadChangesOptions,
  readChanges,
} from "./read-changes.ts";
export { REGENERATE_COMMAND, renderDatabaseTypes } from "./render-database.ts";
export { type SnapshotThenFollow, snapshotThenFollow } from "./snapshot-then-follow.ts";
