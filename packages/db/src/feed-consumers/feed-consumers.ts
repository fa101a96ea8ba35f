import type { ChangeResource } from "@loops-sync/schema/change-feed";

/**
 * `sync.feed_consumers` and `sync.feed_consumer_leases` (migration 0022): named cursors over the change feed
 * that several instances of a backend share. Every write is a SQL function of 0022 (replaced in place by 0027);
 * the operators' transitions are called from this folder, the backends' from anywhere, by name:
 *
 * | from               | to                                        | SQL function               | who                      |
 * | ------------------ | ----------------------------------------- | -------------------------- | ------------------------ |
 * | (none)             | created at the head, 0 or `after`         | `replica.create_consumer`  | `createConsumer`, backends |
 * | any                | dropped with its leases                   | `replica.drop_consumer`    | `dropConsumer`, backends |
 * | any                | floor at a position, every lease gone     | `sync.reset_consumer`      | `resetConsumer` (CLI)    |
 * | floor, leases      | floor over the acked prefix; leased       | `replica.receive_changes`  | `consumeChanges`, backends |
 * | leased             | acknowledged                              | `replica.ack_changes`      | `consumeChanges`, backends |
 *
 * Written once, in SQL (0027): which changes a filter matches (`replica.change_matches`), the resources a
 * filter may name (`replica.change_resources()`, `CHANGE_RESOURCES`) and a consumer's name
 * (`sync.consumer_name_pattern()`, `CONSUMER_NAME_PATTERN`, both in @loops-sync/schema, which partners get
 * alone). test/workspace/table-owners.test.ts sees the writes inside these functions and holds the tree to
 * this folder; test/feed/change-feed-lists.test.ts holds the TypeScript names to the SQL ones.
 */

/** A consumer's optional filter: null (or absent) is every resource, every merchant. */
export interface ConsumerFilter {
  resources?: readonly ChangeResource[] | null;
  merchantIds?: readonly string[] | null;
}
