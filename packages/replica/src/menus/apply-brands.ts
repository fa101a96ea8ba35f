import type { Sql, TransactionSql } from "@loops-sync/db";
import type { MirrorChange } from "./mirror-change.ts";

/** GET /brands item (or GET /brands/{id}) as the replica needs it; the rest is kept in `raw`. */
export interface BrandInput {
  id: string;
  updated_at?: string | null;
}

/**
 * Stores brands as read. Brands carry no version, so `updated_at` is the gate: a read older than the stored
 * one, or the same read again (same `updated_at` and same JSON), writes nothing. Returns one change per row
 * written, in id order.
 */
export async function applyBrands(
  sql: Sql | TransactionSql,
  merchantId: string,
  brands: readonly BrandInput[],
): Promise<MirrorChange[]> {
  if (brands.length === 0) return [];
  const rows = await sql<{ id: string; inserted: boolean }[]>`
    insert into replica.brands as r (
      id, merchant_id, external_ref, name_en, name_ar, description_en, description_ar, logo_url,
      cover_image_url, created_at, updated_at, raw, synced_at
    )
    select b ->> 'id', ${merchantId}, b ->> 'external_ref', b #>> '{name,en}', b #>> '{name,ar}',
           b #>> '{description,en}', b #>> '{description,ar}', b ->> 'logo_url', b ->> 'cover_image_url',
           (b ->> 'created_at')::timestamptz, (b ->> 'updated_at')::timestamptz, b, now()
    from jsonb_array_elements(${JSON.stringify(brands)}::text::jsonb) as b
    order by b ->> 'id'
    on conflict (id) do update set
      merchant_id = excluded.merchant_id, external_ref = excluded.external_ref, name_en = excluded.name_en,
      name_ar = excluded.name_ar, description_en = excluded.description_en,
      description_ar = excluded.description_ar, logo_url = excluded.logo_url,
      cover_image_url = excluded.cover_image_url, created_at = excluded.created_at,
      updated_at = excluded.updated_at, raw = excluded.raw, synced_at = now()
    -- Never an older read over a newer one; an identical read is no change.
    where (r.updated_at is null or excluded.updated_at is null or r.updated_at <= excluded.updated_at)
      and r.raw is distinct from excluded.raw
    returning r.id, (r.xmax = 0) as inserted`;
  return rows
    .map(
      (r): MirrorChange => ({
        resource: "brand",
        resourceId: r.id,
        merchantId,
        operation: r.inserted ? "insert" : "update",
      }),
    )
    .sort((a, b) => (a.resourceId < b.resourceId ? -1 : 1));
}
