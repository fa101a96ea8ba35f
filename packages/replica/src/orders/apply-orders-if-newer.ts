import type { Sql, TransactionSql } from "@loops-sync/db";
import { inTransaction } from "../in-transaction.ts";
import { checkOrder, type OrderInput } from "./order-input.ts";

export interface ApplyOrderResult {
  id: string;
  /** True when this call wrote the order (new, or newer than the stored version) and replaced its children. */
  changed: boolean;
  /** The version stored before this call (null when the order was new). */
  previousVersion: number | null;
  /** The version the replica holds after this call (a concurrent writer's newer version included). */
  version: number;
  /** The order's merchant, as the applied order names it. */
  merchantId: string;
  /** The status this call wrote (when `changed`), and the one stored before (null when new). */
  status: string | null;
  previousStatus: string | null;
  /** When `changed`: the provenance recorded on the row (replica.orders.last_change_*). */
  eventId: string | null;
  source: string | null;
}

/**
 * Why an order is being applied, stored with the row it changes (replica.orders.last_change_event_id and
 * last_change_source). `eventIds`: the events whose refresh fetched it (the newest of them is recorded, with
 * its source); `openEvent`: the order's newest pending or failed event; `source`: what is recorded when no
 * such event is found ('backfill', 'repair', 'catchup' for a list walk).
 */
export interface OrderProvenance {
  eventIds?: readonly string[];
  openEvent?: boolean;
  source?: "catchup" | "backfill" | "repair" | "confirm";
}

/**
 * Version-gated upsert of one order: never older over newer. See {@link applyOrdersIfNewer}.
 */
export async function applyOrderIfNewer(
  sql: Sql | TransactionSql,
  order: OrderInput | unknown,
  provenance: OrderProvenance = {},
): Promise<ApplyOrderResult> {
  const [result] = await applyOrdersIfNewer(sql, [order], [provenance]);
  return result!;
}

/**
 * Version-gated upsert of a batch of orders (a list page, or one fetched order). The parent rows go in ONE
 * statement whose `ON CONFLICT … WHERE replica.orders.version < excluded.version` is the gate, so several
 * workers racing on the same order end with the newest version: the row lock taken by the upsert makes a
 * concurrent writer wait and re-check the gate against the committed row. Items, modifiers and status
 * history are replaced in the same transaction, and only for orders whose parent row changed.
 * `provenance` is one for all the orders, or one per order (same positions).
 * Throws an `invalid_order` LoopsError (before any SQL) for an order the replica cannot store.
 */
export async function applyOrdersIfNewer(
  sql: Sql | TransactionSql,
  orders: readonly (OrderInput | unknown)[],
  provenance: OrderProvenance | readonly OrderProvenance[] = {},
): Promise<ApplyOrderResult[]> {
  // Keep only the newest copy of each id: one statement cannot update the same row twice.
  const newest = new Map<string, { o: OrderInput; p: OrderProvenance }>();
  for (const [i, raw] of orders.entries()) {
    const order = checkOrder(raw);
    const seen = newest.get(order.id);
    const p = Array.isArray(provenance) ? (provenance[i] ?? {}) : (provenance as OrderProvenance);
    if (!seen || seen.o.version < order.version) newest.set(order.id, { o: order, p });
  }
  if (newest.size === 0) return [];
  // A fixed lock order (by id) keeps two concurrent batches from deadlocking on each other's rows.
  const batch = [...newest.values()].sort((a, b) => (a.o.id < b.o.id ? -1 : a.o.id > b.o.id ? 1 : 0));
  const json = JSON.stringify(batch);

  return await inTransaction(sql, async (tx) => {
    const rows = await tx<
      {
        id: string;
        written: boolean;
        changed: boolean;
        previous_version: number | null;
        version: number;
        merchant_id: string;
        status: string | null;
        previous_status: string | null;
        event_id: string | null;
        source: string | null;
      }[]
    >`
      -- Each order with the event it is recorded as last changed by: the newest of the events named, or the
      -- order's newest open event when asked (primary-key and order-index lookups in this statement). Each
      -- branch runs only for orders that ask for it (a one-time filter): a plan cached while sync.events was
      -- small may scan that table, and a list page names no events.
      with input as (
        select e -> 'o' as o, ordinality, ev.id as event_id, coalesce(ev.source, e #>> '{p,source}') as source
        from jsonb_array_elements(${json}::text::jsonb) with ordinality as t(e, ordinality)
        left join lateral (
          select c.id, c.source from (
            select s.id, s.source, s.created_at from sync.events s
            where e #> '{p,eventIds}' is not null
              and s.id = any(array(select jsonb_array_elements_text(e #> '{p,eventIds}')))
            union all
            select s.id, s.source, s.created_at from sync.events s
            where (e #>> '{p,openEvent}')::boolean and s.order_id = e #>> '{o,id}'
              and s.outcome in ('pending', 'failed')
          ) c
          order by c.created_at desc, c.id desc
          limit 1
        ) ev on true
      ),
      prev as (
        select r.id, r.version, r.status, r.raw from replica.orders r where r.id in (select o ->> 'id' from input)
      ),
      upserted as (
        insert into replica.orders as r (
          id, merchant_id, location_id, channel, channel_connection_id, channel_ref, type, status, version,
          scheduled_for, currency, subtotal_amount, discount_amount, delivery_fee_amount, tax_amount,
          total_amount, payment_method, payment_paid, notes, extensions, created_at, updated_at, raw, synced_at,
          last_change_event_id, last_change_source, fetched_version
        )
        select o ->> 'id', o ->> 'merchant_id', o ->> 'location_id', o ->> 'channel',
               o ->> 'channel_connection_id', o ->> 'channel_ref', o ->> 'type', o ->> 'status',
               (o ->> 'version')::bigint, (o ->> 'scheduled_for')::timestamptz,
               coalesce(o #>> '{totals,total,currency}', o #>> '{totals,subtotal,currency}'),
               (o #>> '{totals,subtotal,amount}')::bigint, (o #>> '{totals,discount,amount}')::bigint,
               (o #>> '{totals,delivery_fee,amount}')::bigint, (o #>> '{totals,tax,amount}')::bigint,
               (o #>> '{totals,total,amount}')::bigint, o #>> '{payment,method}',
               (o #>> '{payment,paid}')::boolean, o ->> 'notes', o -> 'extensions',
               (o ->> 'created_at')::timestamptz, (o ->> 'updated_at')::timestamptz, o, now(), event_id, source,
               (o ->> 'version')::bigint
        from input
        order by ordinality
        on conflict (id) do update set
          merchant_id = excluded.merchant_id, location_id = excluded.location_id, channel = excluded.channel,
          channel_connection_id = excluded.channel_connection_id, channel_ref = excluded.channel_ref,
          type = excluded.type, status = excluded.status, version = excluded.version,
          scheduled_for = excluded.scheduled_for, currency = excluded.currency,
          subtotal_amount = excluded.subtotal_amount, discount_amount = excluded.discount_amount,
          delivery_fee_amount = excluded.delivery_fee_amount, tax_amount = excluded.tax_amount,
          total_amount = excluded.total_amount, payment_method = excluded.payment_method,
          payment_paid = excluded.payment_paid, notes = excluded.notes, extensions = excluded.extensions,
          created_at = excluded.created_at, updated_at = excluded.updated_at, raw = excluded.raw,
          synced_at = now(), last_change_event_id = excluded.last_change_event_id,
          last_change_source = case when r.version = excluded.version then 'confirm'
                                    else excluded.last_change_source end,
          fetched_version = excluded.version, unconfirmed_since = null
        -- Newer, or the same version confirming a row applied from an event's payload (migration 0019).
        where r.version < excluded.version or (r.version = excluded.version and r.fetched_version < r.version)
        returning r.id, r.version, r.status, r.last_change_event_id, r.last_change_source, r.raw
      ),
      -- The children of the orders this statement wrote (the gate's winners only), as the order has them.
      written as (
        select u.id, coalesce(nullif(i.o -> 'items', 'null'), '[]') as items,
               coalesce(nullif(i.o -> 'status_history', 'null'), '[]') as history
        from upserted u join input i on i.o ->> 'id' = u.id
      ),
      items as (
        select w.id as order_id, (n - 1)::int as position, item,
               coalesce(nullif(item -> 'modifiers', 'null'), '[]') as modifiers
        from written w cross join lateral jsonb_array_elements(w.items) with ordinality as t(item, n)
      ),
      modifiers as (
        select it.order_id, it.position as item_position, (n - 1)::int as position, modifier
        from items it cross join lateral jsonb_array_elements(it.modifiers) with ordinality as t(modifier, n)
      ),
      history as (
        select w.id as order_id, (n - 1)::int as position, entry
        from written w cross join lateral jsonb_array_elements(w.history) with ordinality as t(entry, n)
      ),
      -- Children are upserted by position and rewritten only where they differ (a status change adds one
      -- history row and touches nothing else); positions beyond the new lists are deleted. Each statement
      -- below touches rows the others do not.
      items_written as (
        insert into replica.order_items as c (
          order_id, position, name_en, name_ar, sku, quantity, unit_price_amount, currency, notes, modifiers
        )
        select order_id, position, item #>> '{name,en}', item #>> '{name,ar}', item ->> 'sku',
               (item ->> 'quantity')::integer, (item #>> '{unit_price,amount}')::bigint,
               item #>> '{unit_price,currency}', item ->> 'notes', modifiers
        from items
        on conflict (order_id, position) do update set
          name_en = excluded.name_en, name_ar = excluded.name_ar, sku = excluded.sku,
          quantity = excluded.quantity, unit_price_amount = excluded.unit_price_amount,
          currency = excluded.currency, notes = excluded.notes, modifiers = excluded.modifiers
        where (c.name_en, c.name_ar, c.sku, c.quantity, c.unit_price_amount, c.currency, c.notes, c.modifiers)
          is distinct from (excluded.name_en, excluded.name_ar, excluded.sku, excluded.quantity,
            excluded.unit_price_amount, excluded.currency, excluded.notes, excluded.modifiers)
        returning 1
      ),
      -- The deletes find the written orders' rows through the primary key (\`= any(array(...))\`, an InitPlan):
      -- joined to \`written\`, Postgres hash-joined a sequential scan of the whole child table on every batch.
      items_dropped as (
        delete from replica.order_items c
        where c.order_id = any(array(select id from written))
          and c.position >= (select jsonb_array_length(w.items) from written w where w.id = c.order_id)
        returning 1
      ),
      modifiers_written as (
        insert into replica.order_item_modifiers as c (
          order_id, item_position, position, name_en, name_ar, quantity, unit_price_amount, currency
        )
        select order_id, item_position, position, modifier #>> '{name,en}', modifier #>> '{name,ar}',
               coalesce((modifier ->> 'quantity')::integer, 1), (modifier #>> '{unit_price,amount}')::bigint,
               modifier #>> '{unit_price,currency}'
        from modifiers
        on conflict (order_id, item_position, position) do update set
          name_en = excluded.name_en, name_ar = excluded.name_ar, quantity = excluded.quantity,
          unit_price_amount = excluded.unit_price_amount, currency = excluded.currency
        where (c.name_en, c.name_ar, c.quantity, c.unit_price_amount, c.currency)
          is distinct from (excluded.name_en, excluded.name_ar, excluded.quantity,
            excluded.unit_price_amount, excluded.currency)
        returning 1
      ),
      modifiers_dropped as (
        delete from replica.order_item_modifiers c
        where c.order_id = any(array(select id from written))
          and (select c.item_position >= jsonb_array_length(w.items)
                      or c.position >= jsonb_array_length(
                        coalesce(nullif(w.items -> c.item_position -> 'modifiers', 'null'), '[]'))
               from written w where w.id = c.order_id)
        returning 1
      ),
      history_written as (
        insert into replica.order_status_history as c (order_id, position, status, at)
        select order_id, position, entry ->> 'status', (entry ->> 'at')::timestamptz from history
        on conflict (order_id, position) do update set status = excluded.status, at = excluded.at
        where (c.status, c.at) is distinct from (excluded.status, excluded.at)
        returning 1
      ),
      history_dropped as (
        delete from replica.order_status_history c
        where c.order_id = any(array(select id from written))
          and c.position >= (select jsonb_array_length(w.history) from written w where w.id = c.order_id)
        returning 1
      )
      -- A confirmation (same version) changed the order only where a reader sees a difference.
      select i.o ->> 'id' as id, (u.id is not null) as written,
             (u.id is not null and (p.version is null or p.version < u.version or p.raw is distinct from u.raw))
               as changed,
             p.version as previous_version,
             coalesce(u.version, greatest(p.version, (i.o ->> 'version')::bigint)) as version,
             i.o ->> 'merchant_id' as merchant_id, u.status, p.status as previous_status,
             u.last_change_event_id as event_id, u.last_change_source as source
      from input i
      left join upserted u on u.id = i.o ->> 'id'
      left join prev p on p.id = i.o ->> 'id'
      order by i.ordinality`;

    // The statement's snapshot predates a concurrent writer that won the gate; a new statement sees its commit.
    const unchanged = rows.filter((r) => !r.written).map((r) => r.id);
    const current = new Map<string, number>();
    if (unchanged.length > 0) {
      const latest = await tx<{ id: string; version: number }[]>`
        select id, version from replica.orders where id = any(${unchanged}::text[])`;
      for (const row of latest) current.set(row.id, row.version);
    }
    return rows.map((r) => ({
      id: r.id,
      changed: r.changed,
      previousVersion: r.previous_version,
      version: current.get(r.id) ?? r.version,
      merchantId: r.merchant_id,
      status: r.status,
      previousStatus: r.previous_status,
      eventId: r.event_id,
      source: r.source,
    }));
  });
}
