import { learnConfiguredMerchants, type Sql } from "@loops-sync/db";
import { type Database, kyselyOver } from "@loops-sync/schema";

/**
 * The merchants to sync: the configured ones (recorded in sync.merchants as learned from config) and every
 * merchant learned and confirmed since (not revoked, not unconfirmed or unknown to Loops). Sorted, so runs and logs are reproducible.
 */
export async function listActiveMerchants(sql: Sql, configured: readonly string[] = []): Promise<string[]> {
  await learnConfiguredMerchants(sql, configured);
  const rows = await kyselyOver<Database>(sql)
    .selectFrom("sync.merchants")
    .select("id")
    .where("status", "=", "active")
    .orderBy("id")
    .execute();
  return rows.map((r) => r.id);
}
