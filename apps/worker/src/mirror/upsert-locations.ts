import { type ResourceChange, recordLocationsListing, type Sql, type TransactionSql } from "@loops-sync/db";
import { inTransaction } from "@loops-sync/replica";
import { locationRawOnConflict } from "./location-raw.ts";

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
  /**
   * When the listing started, by the database's clock: a listing that started before the one last written
   * is not written (it could delete what the newer one added). Default: none (always written).
   */
  listedAt?: Date | undefined;
}

interface Written {
  id: string;
  status: string | null;
  previous_status: string | null;
  operation: "insert" | "update" | "delete";
}

function asChanges(
  resource: "location" | "channel_connection" | "channel",
  merchantId: string | null,
  rows: readonly Written[],
): ResourceChange[] {
  return rows.map((r) => ({
    resource,
    resourceId: r.id,
    merchantId,
    operation: r.operation,
    status: r.status,
    previousStatus: r.previous_status,
  }));
}

/**
 * Replaces a merchant's locations and channel connections with a complete listing, in one transaction:
 * rows the listing no longer has (a location no longer shared, a disconnected channel removed) go, so the
 * replica mirrors what the connection can see. Only call it with a listing read to its last page. Rows read
 * as stored write nothing; what was written (inserted, updated, deleted) comes back for the feed.
 * Writes of one merchant's listings take turns (a transaction-scoped advisory lock), and one that started
 * before the last written (`recordLocationsListing`) writes nothing: a reconcile that listed before go-live
 * cannot delete what go-live just wrote.
 */
export async function replaceMerchantLocations(
  sql: Sql | TransactionSql,
  merchantId: string,
  { locations, channelConnections, listedAt }: MerchantLocations,
): Promise<ResourceChange[]> {
  const locationsJson = JSON.stringify(locations);
  const connectionsJson = JSON.stringify(channelConnections);
  return await inTransaction(sql, async (tx) => {
    await tx`select pg_advisory_xact_lock(hashtext('loops-sync locations'), hashtext(${merchantId}))`;
    if (listedAt && !(await recordLocationsListing(tx, merchantId, listedAt))) return [];
    const locationRows = await tx<Written[]>`
      with input as (select l from jsonb_array_elements(${locationsJson}::text::jsonb) as l),
      prev as (
        select r.id, r.status from replica.locations r where r.id in (select l ->> 'id' from input)
      ),
      written as (
        insert into replica.locations as r (
          id, merchant_id, brand_id, name_en, name_ar, status, timezone, city, country, latitude, longitude,
          updated_at, raw, synced_at
        )
        select l ->> 'id', ${merchantId}, l ->> 'brand_id', l #>> '{name,en}', l #>> '{name,ar}', l ->> 'status',
               coalesce(l ->> 'timezone', 'Asia/Riyadh'), l #>> '{address,city}', l #>> '{address,country}',
               (l #>> '{address,latitude}')::double precision, (l #>> '{address,longitude}')::double precision,
               (l ->> 'updated_at')::timestamptz, l, now()
        from input
        order by l ->> 'id'
        on conflict (id) do update set
          merchant_id = excluded.merchant_id, brand_id = excluded.brand_id, name_en = excluded.name_en,
          name_ar = excluded.name_ar, status = excluded.status, timezone = excluded.timezone, city = excluded.city,
          country = excluded.country, latitude = excluded.latitude, longitude = excluded.longitude,
          updated_at = excluded.updated_at, raw = ${locationRawOnConflict(tx)}, synced_at = now()
        -- A slower, older listing must not undo a newer one; an identical one writes nothing (nor one of the
        -- revision a gateway write mirrored: location-raw.ts).
        where (r.updated_at is null or excluded.updated_at is null or r.updated_at <= excluded.updated_at)
          and (r.raw is distinct from ${locationRawOnConflict(tx)}
               or r.merchant_id is distinct from excluded.merchant_id)
        returning r.id, r.status
      ),
      dropped as (
        delete from replica.locations
        where merchant_id = ${merchantId} and id not in (select l ->> 'id' from input)
        returning id, status
      )
      select w.id, w.status, p.status as previous_status,
             case when p.id is null then 'insert' else 'update' end as operation
      from written w left join prev p on p.id = w.id
      union all
      select d.id, null, d.status, 'delete' from dropped d
      order by 1`;
    const connectionRows = await tx<Written[]>`
      with input as (select c from jsonb_array_elements(${connectionsJson}::text::jsonb) as c),
      prev as (
        select r.id, r.status from replica.channel_connections r where r.id in (select c ->> 'id' from input)
      ),
      written as (
        insert into replica.channel_connections as r (
          id, merchant_id, location_id, channel, status, updated_at, raw, synced_at
        )
        select c ->> 'id', ${merchantId}, c ->> 'location_id', c ->> 'channel', c ->> 'status',
               (c ->> 'updated_at')::timestamptz, c, now()
        from input
        order by c ->> 'id'
        on conflict (id) do update set
          merchant_id = excluded.merchant_id, location_id = excluded.location_id, channel = excluded.channel,
          status = excluded.status, updated_at = excluded.updated_at, raw = excluded.raw, synced_at = now()
        where (r.updated_at is null or excluded.updated_at is null or r.updated_at <= excluded.updated_at)
          and (r.raw is distinct from excluded.raw or r.merchant_id is distinct from excluded.merchant_id
               or r.location_id is distinct from excluded.location_id)
        returning r.id, r.status
      ),
      dropped as (
        delete from replica.channel_connections
        where merchant_id = ${merchantId} and id not in (select c ->> 'id' from input)
        returning id, status
      )
      select w.id, w.status, p.status as previous_status,
             case when p.id is null then 'insert' else 'update' end as operation
      from written w left join prev p on p.id = w.id
      union all
      select d.id, null, d.status, 'delete' from dropped d
      order by 1`;
    return [
      ...asChanges("location", merchantId, locationRows),
      ...asChanges("channel_connection", merchantId, connectionRows),
    ];
  });
}

/**
 * Upserts the channel catalog; an entry read as stored writes nothing. Channels are never deleted: old orders
 * still name them. Returns what changed, for the feed (a channel belongs to no merchant).
 */
export async function upsertChannels(
  sql: Sql | TransactionSql,
  channels: readonly ChannelInput[],
): Promise<ResourceChange[]> {
  if (channels.length === 0) return [];
  const rows = await sql<Written[]>`
    with input as (select c from jsonb_array_elements(${JSON.stringify(channels)}::text::jsonb) as c),
    prev as (select r.id from replica.channels r where r.id in (select c ->> 'id' from input)),
    written as (
      insert into replica.channels as r (id, raw, synced_at)
      select c ->> 'id', c, now() from input
      order by c ->> 'id'
      on conflict (id) do update set raw = excluded.raw, synced_at = now()
      where r.raw is distinct from excluded.raw
      returning r.id
    )
    select w.id, null as status, null as previous_status,
           case when p.id is null then 'insert' else 'update' end as operation
    from written w left join prev p on p.id = w.id
    order by w.id`;
  return asChanges("channel", null, rows);
}
