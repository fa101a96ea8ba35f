import type { Sql, TransactionSql } from "../connection/connect.ts";

/**
 * Holds every call for this merchant until `seconds` from now (a 429's Retry-After); its status stays (a
 * merchant without a row gets one: active, learned from the webhook). A later pause never shortens an
 * earlier, longer one. Returns the moment calls may resume.
 */
export async function pauseMerchant(
  sql: Sql | TransactionSql,
  merchantId: string,
  seconds: number,
): Promise<Date> {
  const wait = Math.max(1, Math.ceil(seconds));
  const [row] = await sql<{ paused_until: Date }[]>`
    insert into sync.merchants as m (id, learned_from, paused_until)
    values (${merchantId}, 'webhook', now() + make_interval(secs => ${wait}))
    on conflict (id) do update
      set paused_until = greatest(coalesce(m.paused_until, now()), excluded.paused_until)
    returning paused_until`;
  return row!.paused_until;
}
