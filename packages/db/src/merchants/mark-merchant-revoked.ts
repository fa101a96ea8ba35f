import type { Sql, TransactionSql } from "../connection/connect.ts";

/**
 * any → revoked, naming the revoked connection (null: it keeps the one it names). Safe to repeat: the first
 * revocation time is kept. A merchant without a row gets one, learned from the webhook that revoked it.
 * The rest of a revocation (its events, its queued orders, its mirrored connection) is `revokeMerchant`'s.
 */
export async function markMerchantRevoked(
  sql: Sql | TransactionSql,
  merchantId: string,
  connectionId: string | null,
): Promise<void> {
  await sql`
    insert into sync.merchants as m (id, learned_from, status, revoked_at, connection_id)
    values (${merchantId}, 'webhook', 'revoked', now(), ${connectionId})
    on conflict (id) do update
    set status = 'revoked', connection_id = coalesce(excluded.connection_id, m.connection_id),
        revoked_at = case when m.status = 'revoked' then coalesce(m.revoked_at, now()) else now() end`;
}

/**
 * revoked → unconfirmed: an event of the revoked merchant named a new connection (a reconnect). The merchant
 * names it and waits for confirm_merchant's GET /connection (`confirmMerchant`, or `refuseMerchant`: revoked
 * again, with that connection, so its next events ask nothing); `revoked_at` is kept until then. Returns
 * whether it moved (false: not revoked, a reconnect already started).
 */
export async function reopenRevokedMerchant(
  tx: TransactionSql,
  merchantId: string,
  connectionId: string,
): Promise<boolean> {
  const moved = await tx`
    update sync.merchants set status = 'unconfirmed', connection_id = ${connectionId}, confirm_error = null
    where id = ${merchantId} and status = 'revoked' returning id`;
  return moved.length > 0;
}
