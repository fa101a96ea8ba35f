import type { Sql, TransactionSql } from "../connection/connect.ts";

/**
 * (none) → unconfirmed or active: the inbox's learning, as a CTE body of its one statement (the receiver's
 * hot path gains no round trip). Adds the merchants of a CTE named `stored` (merchant_id) not known yet,
 * returning id and status. A merchant first named by a webhook is unconfirmed until GET /connection answers
 * for it (confirm_merchant): a portal test event's made-up merchant must not join the sync. One named by
 * catch-up or the CLI is active. DO NOTHING takes no row lock on known merchants: concurrent batches never
 * queue behind each other here. `source` is the events' (`EventSource`: webhook, catchup, cli).
 */
export function learnInboxMerchants(sql: Sql | TransactionSql, source: string) {
  return sql`
    insert into sync.merchants (id, learned_from, status)
    select distinct merchant_id, ${source},
           case when ${source}::text = 'webhook' then 'unconfirmed' else 'active' end
    from stored
    on conflict (id) do nothing
    returning id, status`;
}

/**
 * (none) → active: the configured merchants (LOOPS_MERCHANT_IDS), learned from config. A merchant already
 * known keeps its state: a revoked one stays revoked.
 */
export async function learnConfiguredMerchants(
  sql: Sql | TransactionSql,
  merchantIds: readonly string[],
): Promise<void> {
  if (merchantIds.length === 0) return;
  await sql`
    insert into sync.merchants (id, learned_from) select unnest(${[...merchantIds]}::text[]), 'config'
    on conflict (id) do nothing`;
}
