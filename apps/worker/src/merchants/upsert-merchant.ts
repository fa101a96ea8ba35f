import { type ResourceChange, recordActiveConnection, type Sql, type TransactionSql } from "@loops-sync/db";

/** GET /merchant as the replica needs it; other fields are kept in `raw`. */
export interface MerchantInput {
  id: string;
  status: string;
}

/** GET /connection as the replica needs it; other fields are kept in `raw`. */
export interface ConnectionInput {
  id: string;
  merchant_id: string;
  status: string;
}

interface Written {
  id: string;
  merchant_id: string;
  status: string;
  previous_status: string | null;
  inserted: boolean;
}

function asChange(resource: "merchant" | "connection", rows: readonly Written[]): ResourceChange[] {
  return rows.map((r) => ({
    resource,
    resourceId: r.id,
    merchantId: r.merchant_id,
    operation: r.inserted ? "insert" : "update",
    status: r.status,
    previousStatus: r.previous_status,
  }));
}

/**
 * Stores the merchant as last read. It carries no version, so the newest read wins; a read identical to the
 * stored one writes nothing. Returns the change, if any, for the feed.
 */
export async function upsertMerchant(
  sql: Sql | TransactionSql,
  merchant: MerchantInput,
): Promise<ResourceChange[]> {
  const json = JSON.stringify(merchant);
  const rows = await sql<Written[]>`
    with prev as (select status from replica.merchants where id = ${merchant.id}),
    written as (
      insert into replica.merchants as r (
        id, external_ref, name_en, name_ar, status, business_profile_status, created_at, raw, synced_at
      )
      select m ->> 'id', m ->> 'external_ref', m #>> '{name,en}', m #>> '{name,ar}', m ->> 'status',
             m ->> 'business_profile_status', (m ->> 'created_at')::timestamptz, m, now()
      from (select ${json}::text::jsonb as m) as input
      on conflict (id) do update set
        external_ref = excluded.external_ref, name_en = excluded.name_en, name_ar = excluded.name_ar,
        status = excluded.status, business_profile_status = excluded.business_profile_status,
        created_at = excluded.created_at, raw = excluded.raw, synced_at = now()
      where r.raw is distinct from excluded.raw
      returning r.id, r.status
    )
    select w.id, w.id as merchant_id, w.status, p.status as previous_status, p.status is null as inserted
    from written w left join prev p on true`;
  return asChange("merchant", rows);
}

/**
 * Stores the connection the merchant granted (scopes, shared locations); like {@link upsertMerchant}. An
 * active one becomes the connection an active merchant's state names (sync.merchants.connection_id), so a
 * late revocation of an older connection is told apart (revocationIsStale).
 */
export async function upsertConnection(
  sql: Sql | TransactionSql,
  connection: ConnectionInput,
): Promise<ResourceChange[]> {
  const json = JSON.stringify(connection);
  const rows = await sql<Written[]>`
    with prev as (select status from replica.connections where id = ${connection.id}),
    written as (
      insert into replica.connections as r (
        id, merchant_id, external_ref, status, scopes, location_ids, include_future_locations, created_at, raw,
        synced_at
      )
      select c ->> 'id', c ->> 'merchant_id', c ->> 'external_ref', c ->> 'status',
             coalesce(array(select jsonb_array_elements_text(c -> 'scopes')), '{}'),
             coalesce(array(select jsonb_array_elements_text(c -> 'location_ids')), '{}'),
             (c ->> 'include_future_locations')::boolean, (c ->> 'created_at')::timestamptz, c, now()
      from (select ${json}::text::jsonb as c) as input
      on conflict (id) do update set
        merchant_id = excluded.merchant_id, external_ref = excluded.external_ref, status = excluded.status,
        scopes = excluded.scopes, location_ids = excluded.location_ids,
        include_future_locations = excluded.include_future_locations, created_at = excluded.created_at,
        raw = excluded.raw, synced_at = now()
      where r.raw is distinct from excluded.raw
      returning r.id, r.merchant_id, r.status
    )
    select w.id, w.merchant_id, w.status, p.status as previous_status, p.status is null as inserted
    from written w left join prev p on true`;
  if (connection.status === "active")
    await recordActiveConnection(sql, connection.merchant_id, connection.id);
  return asChange("connection", rows);
}
