import type { ResourceChange, TransactionSql } from "@loops-sync/db";
import { locationRawOfWrite } from "./location-raw.ts";

/** A location as POST or PATCH /locations returns it (the write shape: opening hours, no status). */
export interface LocationWrite {
  id: string;
  merchant_id: string;
  updated_at?: string | null;
}

/**
 * Mirrors a location a write through the gateway returned, gated as the listing is: never over a newer
 * `updated_at`, and a row already holding all of it writes nothing. The write shape has no `status`: a stored
 * row keeps its own, a new location is `closed` (it has no channel connection before its merchant goes live;
 * the reconcile's listing reads the real one). `raw` keeps the stored keys under the write's (location-raw.ts).
 */
export async function applyLocationWrite(
  tx: TransactionSql,
  location: LocationWrite,
): Promise<ResourceChange[]> {
  const rows = await tx<{ id: string; status: string; previous_status: string | null }[]>`
    with input as (select ${JSON.stringify(location)}::text::jsonb as l),
    prev as (select id, status from replica.locations where id = ${location.id}),
    written as (
      insert into replica.locations as r (
        id, merchant_id, brand_id, name_en, name_ar, status, timezone, city, country, latitude, longitude,
        updated_at, raw, synced_at
      )
      select l ->> 'id', l ->> 'merchant_id', l ->> 'brand_id', l #>> '{name,en}', l #>> '{name,ar}',
             coalesce(l ->> 'status', 'closed'), coalesce(l ->> 'timezone', 'Asia/Riyadh'), l #>> '{address,city}',
             l #>> '{address,country}', (l #>> '{address,latitude}')::double precision,
             (l #>> '{address,longitude}')::double precision, (l ->> 'updated_at')::timestamptz, l, now()
      from input
      on conflict (id) do update set
        merchant_id = excluded.merchant_id, brand_id = coalesce(excluded.brand_id, r.brand_id),
        name_en = excluded.name_en, name_ar = excluded.name_ar, timezone = excluded.timezone,
        city = excluded.city, country = excluded.country, latitude = excluded.latitude,
        longitude = excluded.longitude, updated_at = excluded.updated_at, raw = ${locationRawOfWrite(tx)},
        synced_at = now()
      where (r.updated_at is null or excluded.updated_at is null or r.updated_at <= excluded.updated_at)
        and r.raw is distinct from ${locationRawOfWrite(tx)}
      returning r.id, r.status
    )
    select w.id, w.status, p.status as previous_status from written w left join prev p on p.id = w.id`;
  return rows.map((r) => ({
    resource: "location",
    resourceId: r.id,
    merchantId: location.merchant_id,
    operation: r.previous_status === null ? "insert" : "update",
    status: r.status,
    previousStatus: r.previous_status,
  }));
}
