import type { Sql } from "@loops-sync/db";

/**
 * The merchants to sync: the configured ones (recorded in sync.merchants as learned from config) and every
 * merchant learned since, minus the revoked ones. Sorted, so runs and logs are reproducible.
 */
export async function listActiveMerchants(sql: Sql, configured: readonly string[] = []): Promise<string[]> {
  if (configured.length > 0) {
    await sql`
      insert into sync.merchants (id, learned_from) select unnest(${[...configured]}::text[]), 'config'
      on conflict (id) do nothing`;
  }
  const rows = await sql<
    { id: string }[]
  >`select id from sync.merchants where status <> 'revoked' order by id`;
  return rows.map((r) => r.id);
}
