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

/**
 * (none) or unconfirmed → active: a merchant the partner's backend created through the gateway (POST
 * /merchants answered 201: Loops knows it and connected it to us), synced from now on like one named in
 * LOOPS_MERCHANT_IDS. `learned`: new here (`learned_from` gateway); `confirmed`: its own merchant.created
 * webhook came first and left it unconfirmed (its waiting events are the caller's to dispatch); null: known
 * already, its state kept (a revoked one stays revoked).
 */
export async function learnCreatedMerchant(
  sql: Sql | TransactionSql,
  merchantId: string,
): Promise<"learned" | "confirmed" | null> {
  const [row] = await sql<{ inserted: boolean }[]>`
    insert into sync.merchants as m (id, learned_from, status) values (${merchantId}, 'gateway', 'active')
    on conflict (id) do update set status = 'active', confirm_error = null
      where m.status = 'unconfirmed' and m.revoked_at is null
    returning (xmax = 0) as inserted`;
  return row === undefined ? null : row.inserted ? "learned" : "confirmed";
}
