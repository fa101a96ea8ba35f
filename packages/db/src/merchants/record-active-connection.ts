import type { Sql, TransactionSql } from "../connection/connect.ts";

/**
 * active → active, naming `connectionId`: GET /connection answered it active, so it becomes the connection an
 * active merchant's state names, and a late revocation of an older connection is told apart
 * (`revocationIsStale`). A merchant in any other state, or naming it already, is left as it is.
 */
export async function recordActiveConnection(
  sql: Sql | TransactionSql,
  merchantId: string,
  connectionId: string,
): Promise<void> {
  await sql`
    update sync.merchants set connection_id = ${connectionId}
    where id = ${merchantId} and status = 'active'
      and connection_id is distinct from ${connectionId}`;
}
