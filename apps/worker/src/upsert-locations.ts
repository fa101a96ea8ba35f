import type { Sql, TransactionSql } from "@loops-sync/db";
import { inTransaction } from "@loops-sync/replica";

/** GET /locations item as the replica needs it; other fields are kept in `raw`. */
export interface LocationInput {
  id: string;
  status: string;
}

/** GET /locations/{id}/channel-connections item; other fields are kept in `raw`. */
export interface ChannelConnectionInput {
  id: string;
  location_id: string;
  channel: string;
  status: string;
}

/** GET /channels item; everything but the id is kept in `raw`. */
export interface ChannelInput {
  id: string;
}

export interface MerchantLocations {
  locations: readonly LocationInput[];
  /** Channel connections of every listed location. */
  channelConnections: readonly ChannelConnectionInput[];
}

/**
 * Replaces a merchant's locations and channel connections with a complete listing, in one transaction:
 * rows the listing no longer has (a location no longer shared, a disconnected channel removed) go, so the
 * replica mirrors what the connection can see. Only call it with a listing read to its last page.
 */
export async function replaceMerchantLocations(
  sql: Sql | TransactionSql,
  merchantId: string,
  { locations, channelConnections }: MerchantLocations,
): Promise<void> {
  const locationsJson = JSON.stringify(locations);
  const connectionsJson = JSON.stringify(channelConnections);
  await inTransaction(sql, async (tx) => {
    await tx`
      insert into replica.locations as r (
        id, merchant_id, brand_id, name_en, name_ar, status, timezone, city, country, latitude, longitude,
        updated_at, raw, synced_at
      )
      select l ->> 'id', ${merchantId}, l ->> 'brand_id', l #>> '{name,en}', l #>> '{name,ar}', l ->> 'status',
             coalesce(l ->> 'timezone', 'Asia/Riyadh'), l #>> '{address,city}', l #>> '{address,country}',
             (l #>> '{address,latitude}')::double precision, (l #>> '{address,longitude}')::double precision,
             (l ->> 'updated_at')::timestamptz, l, now()
      from jsonb_array_elements(${locationsJson}::text::jsonb) as l
      order by l ->> 'id'
      on conflict (id) do update set
        merchant_id = excluded.merchant_id, brand_id = excluded.brand_id, name_en = excluded.name_en,
        name_ar = excluded.name_ar, status = excluded.status, timezone = excluded.timezone, city = excluded.city,
        country = excluded.country, latitude = excluded.latitude, longitude = excluded.longitude,
        updated_at = excluded.updated_at, raw = excluded.raw, synced_at = now()
      -- A slower, older listing must not undo a newer one.
      where r.updated_at is null or excluded.updated_at is null or r.updated_at <= excluded.updated_at`;
    await tx`
      delete from replica.locations
      where merchant_id = ${merchantId}
        and id <> all(array(select l ->> 'id' from jsonb_array_elements(${locationsJson}::text::jsonb) as l))`;
    await tx`
      insert into replica.channel_connections as r (
        id, merchant_id, location_id, channel, status, updated_at, raw, synced_at
      )
      select c ->> 'id', ${merchantId}, c ->> 'location_id', c ->> 'channel', c ->> 'status',
             (c ->> 'updated_at')::timestamptz, c, now()
      from jsonb_array_elements(${connectionsJson}::text::jsonb) as c
      order by c ->> 'id'
      on conflict (id) do update set
        merchant_id = excluded.merchant_id, location_id = excluded.location_id, channel = excluded.channel,
        status = excluded.status, updated_at = excluded.updated_at, raw = excluded.raw, synced_at = now()
      where r.updated_at is null or excluded.updated_at is null or r.updated_at <= excluded.updated_at`;
    await tx`
      delete from replica.channel_connections
      where merchant_id = ${merchantId}
        and id <> all(array(select c ->> 'id' from jsonb_array_elements(${connectionsJson}::text::jsonb) as c))`;
  });
}

/** Upserts the channel catalog. Channels are never deleted: old orders still name them. */
export async function upsertChannels(
  sql: Sql | TransactionSql,
  channels: readonly ChannelInput[],
): Promise<void> {
  if (channels.length === 0) return;
  await sql`
    insert into replica.channels as r (id, raw, synced_at)
    select c ->> 'id', c, now() from jsonb_array_elements(${JSON.stringify(channels)}::text::jsonb) as c
    order by c ->> 'id'
    on conflict (id) do update set raw = excluded.raw, synced_at = now()`;
}
