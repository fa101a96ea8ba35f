/**
 * The change feed's names, written once for its writers (`recordChanges`, packages/db) and its readers
 * (`readChanges`, `followChanges`, `consumeChanges`, the worker's forwarder). The table, its commit-order lock
 * and its NOTIFY are SQL (migrations/0011_change_feed.sql); test/feed/change-feed-lists.test.ts holds these
 * lists to the migrated database, and test/workspace/change-feed-writers.test.ts holds the tree to them.
 */

/** What `replica.changes.resource` may name (the table's check constraint, migration 0011). */
export const CHANGE_RESOURCES = [
  "order",
  "location",
  "channel_connection",
  "brand",
  "menu",
  "merchant",
  "connection",
  "job",
  "channel",
] as const;

/** What `replica.changes.resource` names. */
export type ChangeResource = (typeof CHANGE_RESOURCES)[number];

/**
 * A feed consumer's name: 1-63 letters, digits, `_ . : -`, starting with a letter or digit. The same pattern
 * as `sync.consumer_name_pattern()` (migration 0027), which `replica.create_consumer` checks names with.
 */
export const CONSUMER_NAME_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_.:-]{0,62}$/;

/**
 * How a change came (`replica.changes.source`): a webhook's event, catch-up's event log or list walk, a
 * backfill, a repair, a reconcile, the CLI; `event`: applied from an order.status_changed payload without a
 * call; `confirm`: a confirming fetch of such a row found something a reader sees differ; `write`: what a write
 * through the gateway returned (docs/gateway.md).
 */
export const CHANGE_SOURCES = [
  "webhook",
  "catchup",
  "backfill",
  "repair",
  "reconcile",
  "cli",
  "event",
  "confirm",
  "write",
] as const;

/** How a change came. */
export type ChangeSource = (typeof CHANGE_SOURCES)[number];

/** The channel `replica.changes` notifies after each commit that added changes (payload: the top position). */
export const CHANGES_CHANNEL = "loops_sync_changes";
