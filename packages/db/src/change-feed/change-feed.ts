import type { ChangeResource, ChangeSource } from "@loops-sync/schema/change-feed";

/**
 * `replica.changes`, the change feed (migration 0011), and `replica.change_feed_state`, how far prune removed
 * it. Only the functions of this folder write them (test/workspace/change-feed-writers.test.ts and
 * table-owners.test.ts hold the rest of the tree to it); a change is never updated. Each is one transition:
 *
 * | from            | to                                                | function        | who                         |
 * | --------------- | ------------------------------------------------- | --------------- | --------------------------- |
 * | (mirror writes) | recorded at the next positions, NOTIFY at commit  | `recordChanges` | each writer, last in its tx |
 * | recorded, old   | pruned: a prefix deleted, `pruned_through` raised | `pruneChanges`  | `pruneFinished` (prune)     |
 *
 * Recorded: the insert takes the feed's commit-order lock (docs/decisions.md, "The change feed is gap-free by
 * commit order") until the transaction ends, so nothing may follow it: a wait after it holds up every writer.
 * Pruned: only a prefix of positions goes, so `read_changes` raises `changes_expired` below `pruned_through`
 * rather than skipping a hole. It stops at the first change forwarding still needs, whatever its age, or that a
 * feed consumer has not acknowledged while younger than RETENTION_DAYS (`changes-still-needed.ts`). Reading and
 * following the feed (`readChanges`, `followChanges`, `consumeChanges`) and its names live in
 * `@loops-sync/schema`, which partners get alone, so they stay there.
 */

/** One committed change of a mirrored row, as `replica.changes` records it. */
export interface ChangeInput {
  resource: ChangeResource;
  resourceId: string;
  /** Null only for resources of no merchant (the channel catalog). */
  merchantId: string | null;
  operation: "insert" | "update" | "delete";
  version?: number | null;
  previousVersion?: number | null;
  status?: string | null;
  previousStatus?: string | null;
  source: ChangeSource;
  /** The upstream event that led to the change, when one did. */
  eventId?: string | null;
}

/** A change as the statement that wrote it knows it; the task that ran it adds the cause. */
export type ResourceChange = Omit<ChangeInput, "source" | "eventId">;

/** The feed's NOTIFY channel (one name, in @loops-sync/schema), for the worker, which reads no schema. */
export { CHANGES_CHANNEL } from "@loops-sync/schema/change-feed";
/** What `replica.changes.resource` names, and how a change came (one list each, in @loops-sync/schema). */
export type { ChangeResource, ChangeSource };
