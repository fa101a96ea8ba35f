import type { Sql } from "./connect.ts";

/**
 * The lowest position of `replica.changes` that something other than a reader still needs, whatever its age,
 * or null when nothing does: prune keeps this position and every one above it. Today that is forwarding
 * (migration 0015): every change not yet delivered to FORWARD_URL, dead ones included, and every change its
 * scan has not reached (`sync.forward_needed_from()`, null while forwarding was never turned on). A position,
 * not a row filter, because prune removes only a prefix of the feed: `pruned_through` then says exactly what a
 * reader may have missed.
 */
export async function lowestChangeStillNeeded(sql: Sql): Promise<number | null> {
  const [row] = await sql<{ from: number | null }[]>`select sync.forward_needed_from() as from`;
  return row?.from ?? null;
}
