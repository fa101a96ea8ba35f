import type { Sql } from "./connect.ts";

/**
 * The lowest position of `replica.changes` that something other than a reader still needs, whatever its age,
 * or null when nothing does: prune keeps this position and every one above it. The single hook for keeping
 * changes past RETENTION_DAYS: forwarding (undelivered changes) plugs its predicate in here, as the lowest
 * position any destination has not delivered yet. A position, not a row filter, because prune removes only
 * a prefix of the feed: `pruned_through` then says exactly what a reader may have missed.
 */
export async function lowestChangeStillNeeded(_sql: Sql): Promise<number | null> {
  return null;
}
