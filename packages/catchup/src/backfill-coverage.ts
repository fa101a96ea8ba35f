import type { Sql } from "@loops-sync/db";

export interface CoverageInput {
  /** updated_since of the run (null: all history). */
  since: Date | null;
  /** updated_at of the first order listed (the newest), epoch ms. */
  newest: number | undefined;
  /** updated_at of the last order listed so far (the oldest yet), epoch ms. */
  oldestListed: number | undefined;
  nextCursor: string | null;
  /** Orders listed so far. */
  seen: number;
  /** How many orders the replica already holds in the run's range; 0 when unknown. */
  expected: number;
}

/**
 * How far a backfill has come (0–1), for a progress bar and its ETA; undefined when there is nothing to
 * estimate with. The replica's count for the range is the better guide when it has one (orders cluster in
 * time, so a time share can sit at 0% for most of a run); otherwise the share of the time span from `since`
 * to the newest update already listed (the list runs newest first).
 */
export function backfillCoverage({
  since,
  newest,
  oldestListed,
  nextCursor,
  seen,
  expected,
}: CoverageInput): number | undefined {
  if (!nextCursor) return 1;
  if (expected > 0) return Math.min(0.99, seen / expected);
  if (!since || newest === undefined || oldestListed === undefined) return undefined;
  const span = newest - since.getTime();
  if (span <= 0) return undefined;
  return Math.min(0.99, Math.max(0, (newest - oldestListed) / span));
}

/** Orders the replica holds for the merchant in the range: a lower bound of what upstream will list. */
export async function countReplicaOrders(sql: Sql, merchantId: string, since: Date | null): Promise<number> {
  const [row] = await sql<{ n: number }[]>`
    select count(*)::int as n from replica.orders
    where merchant_id = ${merchantId} and (${since}::timestamptz is null or updated_at >= ${since}::timestamptz)`;
  return row?.n ?? 0;
}
