import type { Sql } from "../connection/connect.ts";

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

/**
 * The lowest position of `replica.changes` a feed consumer has not acknowledged (just above its floor,
 * `sync.consumers_needed_from()`, migration 0022), or null when there is no consumer. Unlike forwarding's, prune
 * keeps these only while they are younger than RETENTION_DAYS: a consumer stopped for longer gets
 * changes_expired rather than holding the feed forever.
 */
export async function lowestChangeConsumersNeed(sql: Sql): Promise<number | null> {
  const [row] = await sql<{ from: string | null }[]>`select sync.consumers_needed_from()::text as from`;
  return row?.from == null ? null : Number(row.from);
}
