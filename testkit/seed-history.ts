// A month of history in a database the previous release migrated, written by a few `generate_series`
// statements: inbox rows as the receiver stores them, the orders they led to with items and status history,
// and one change-feed row per event. Realistic enough that a migration which scans, indexes or backfills these
// tables does the work it would do in a deployment (same columns, JSON shapes, outcomes, time spread).

import type { Sql } from "@loops-sync/db";

/** Events per order: placed, accepted, preparing, ready, picked_up (a pickup order's whole life). */
export const EVENTS_PER_ORDER = 5;
const STATUSES = ["placed", "accepted", "preparing", "ready", "picked_up"];

export interface HistoryOptions {
  /** Inbox rows (sync.events); orders are a fifth of this, feed changes as many. */
  events: number;
  /** Days the history spans, ending now. Default: 30 (inside the default RETENTION_DAYS of 35). */
  days?: number;
  /** Merchants the history belongs to: ids none of the sandbox's, so the mirror check is about live orders. */
  merchants?: number;
  /**
   * VACUUM as well as ANALYZE afterwards, as autovacuum leaves a month-old table (visibility map, hint bits).
   * Default: false (ANALYZE only: seconds fewer for the suite; a migration's first scan then sets the hints).
   */
  vacuum?: boolean;
}

export interface SeededHistory {
  events: number;
  orders: number;
  items: number;
  changes: number;
  /** Their prefix: `mer_hist_`. */
  merchantIds: string[];
  /** Database size afterwards, in bytes. */
  databaseBytes: number;
  seconds: number;
  /** Seconds per table written (and `vacuum analyze`), in order. */
  steps: Record<string, number>;
}

/**
 * Seeds `events` inbox rows, events/5 orders (two items each, five history rows) and one change per event,
 * then ANALYZE (and VACUUM when asked). The history's merchants have no
 * sync.merchants row, so the worker never calls Loops about them.
 */
export async function seedHistory(
  sql: Sql,
  { events, days = 30, merchants = 20, vacuum = false }: HistoryOptions,
): Promise<SeededHistory> {
  const started = performance.now();
  const steps: Record<string, number> = {};
  const timed = async (label: string, run: () => Promise<unknown>) => {
    const at = performance.now();
    await run();
    steps[label] = (performance.now() - at) / 1000;
  };
  const orders = Math.ceil(events / EVENTS_PER_ORDER);
  // Order o (1-based) is placed at spanStart + o * spacing; its later steps follow 4 minutes apart.
  const spacingMs = (days * 86_400_000) / orders;
  const common = sql`
    with o as (
      select g as n,
             'ord_hist_' || lpad(g::text, 9, '0') as id,
             'mer_hist_' || lpad((g % ${merchants})::text, 2, '0') as merchant_id,
             'loc_hist_' || lpad((g % ${merchants})::text, 2, '0') || '_' || (g % 3) as location_id,
             (array['hungerstation','jahez','careem','keeta'])[1 + g % 4] as channel,
             now() - make_interval(days => ${days}) + make_interval(secs => g * ${spacingMs / 1000}::float8) as placed_at
        from generate_series(1, ${orders}) g
    )`;
  await sql.begin(async (tx) => {
    // One sorted build per index after the rows are in, not 200k+ index insertions; the rows are consistent
    // by construction, so the foreign-key triggers are off for this transaction (superuser; else they run).
    await tx`set local maintenance_work_mem = '256MB'`;
    await tx`set local synchronous_commit = off`;
    await tx.savepoint((sp) => sp`set local session_replication_role = replica`).catch(() => {});
    const dropped = await tx<{ name: string; definition: string }[]>`
      select indexrelid::regclass::text as name, pg_get_indexdef(indexrelid) as definition
        from pg_index
       where indrelid = any(array['sync.events', 'replica.orders', 'replica.order_items',
                                  'replica.order_status_history', 'replica.changes']::regclass[])
         and not indisprimary and not indisunique`;
    for (const { name } of dropped) await tx.unsafe(`drop index ${name}`);
    await timed(
      "sync.events",
      () => tx`
      ${common}
      insert into sync.events (id, type, merchant_id, location_id, connection_id, origin_type,
                               origin_application_id, created_at, received_at, source, payload, outcome, outcome_at)
      select e.id, e.type, o.merchant_id, o.location_id, 'con_' || o.merchant_id, 'channel', null,
             e.at, e.at + interval '180 ms', case when (o.n + s) % 20 = 0 then 'catchup' else 'webhook' end,
             jsonb_build_object(
               'id', e.id, 'type', e.type, 'created_at', e.at, 'merchant_id', o.merchant_id,
               'location_id', o.location_id, 'connection_id', 'con_' || o.merchant_id,
               'origin', jsonb_build_object('type', 'channel', 'application_id', null),
               'data', jsonb_build_object('order_id', o.id, 'channel_ref', 'R-' || o.n, 'status', (${STATUSES}::text[])[s + 1],
                                          'version', s + 1)
                       || case when s > 0 then jsonb_build_object('previous_status', (${STATUSES}::text[])[s]) else '{}' end),
             case when (o.n + s) % 50 = 0 then 'stale' else 'applied' end,
             e.at + interval '1.2 s'
        from o cross join generate_series(0, ${EVENTS_PER_ORDER - 1}) s
        cross join lateral (
          select 'evt_hist_' || lpad(((o.n - 1) * ${EVENTS_PER_ORDER} + s + 1)::text, 10, '0') as id,
                 case when s = 0 then 'order.created' else 'order.status_changed' end as type,
                 o.placed_at + make_interval(mins => 4 * s) as at
        ) e
       where (o.n - 1) * ${EVENTS_PER_ORDER} + s < ${events}`,
    );
    await timed(
      "replica.orders",
      () => tx`
      ${common}
      insert into replica.orders (id, merchant_id, location_id, channel, channel_connection_id, channel_ref, type,
                                  status, version, currency, subtotal_amount, discount_amount, delivery_fee_amount,
                                  tax_amount, total_amount, payment_method, payment_paid, notes, extensions,
                                  created_at, updated_at, raw, synced_at, last_change_event_id, last_change_source,
                                  fetched_version)
      select o.id, o.merchant_id, o.location_id, o.channel, 'chc_' || o.merchant_id, 'R-' || o.n, 'pickup',
             'picked_up', 5, 'SAR', t.subtotal, 0, 0, t.tax, t.subtotal + t.tax, 'card', true, null, '{}',
             o.placed_at, o.placed_at + interval '16 min',
             jsonb_build_object(
               'id', o.id, 'version', 5, 'merchant_id', o.merchant_id, 'location_id', o.location_id,
               'channel', o.channel, 'channel_connection_id', 'chc_' || o.merchant_id, 'channel_ref', 'R-' || o.n,
               'type', 'pickup', 'status', 'picked_up',
               'status_history', jsonb_build_array(
                  jsonb_build_object('status', 'placed', 'at', o.placed_at),
                  jsonb_build_object('status', 'accepted', 'at', o.placed_at + interval '4 min'),
                  jsonb_build_object('status', 'preparing', 'at', o.placed_at + interval '8 min'),
                  jsonb_build_object('status', 'ready', 'at', o.placed_at + interval '12 min'),
                  jsonb_build_object('status', 'picked_up', 'at', o.placed_at + interval '16 min')),
               'scheduled_for', null,
               'items', jsonb_build_array(
                  jsonb_build_object('name', jsonb_build_object('en', 'Karak Tea', 'ar', 'شاي كرك'), 'sku', 'KRK',
                    'quantity', 2, 'unit_price', jsonb_build_object('amount', 700, 'currency', 'SAR'),
                    'modifiers', '[]'::jsonb, 'notes', null),
                  jsonb_build_object('name', jsonb_build_object('en', 'Beef Kabsa', 'ar', 'كبسة لحم'), 'sku', 'KBS-BEEF',
                    'quantity', 1 + o.n % 3, 'unit_price', jsonb_build_object('amount', 4500, 'currency', 'SAR'),
                    'modifiers', '[]'::jsonb, 'notes', null)),
               'totals', jsonb_build_object(
                  'subtotal', jsonb_build_object('amount', t.subtotal, 'currency', 'SAR'),
                  'discount', jsonb_build_object('amount', 0, 'currency', 'SAR'),
                  'delivery_fee', jsonb_build_object('amount', 0, 'currency', 'SAR'),
                  'tax', jsonb_build_object('amount', t.tax, 'currency', 'SAR'),
                  'total', jsonb_build_object('amount', t.subtotal + t.tax, 'currency', 'SAR')),
               'payment', jsonb_build_object('method', 'card', 'paid', true), 'notes', null,
               'created_at', o.placed_at, 'updated_at', o.placed_at + interval '16 min', 'extensions', '{}'::jsonb),
             o.placed_at + interval '16 min 2 s',
             'evt_hist_' || lpad((o.n * ${EVENTS_PER_ORDER})::text, 10, '0'), 'webhook', 5
        from o cross join lateral (select 1400 + 4500 * (1 + o.n % 3) as subtotal,
                                          (1400 + 4500 * (1 + o.n % 3)) * 15 / 100 as tax) t`,
    );
    await timed(
      "replica.order_items",
      () => tx`
      insert into replica.order_items (order_id, position, name_en, name_ar, sku, quantity, unit_price_amount, currency)
      select o.id, p, case p when 0 then 'Karak Tea' else 'Beef Kabsa' end,
             case p when 0 then 'شاي كرك' else 'كبسة لحم' end, case p when 0 then 'KRK' else 'KBS-BEEF' end,
             case p when 0 then 2 else 1 + (substr(o.id, 10)::int) % 3 end, case p when 0 then 700 else 4500 end, 'SAR'
        from replica.orders o cross join generate_series(0, 1) p
       where o.id like 'ord_hist_%'`,
    );
    await timed(
      "replica.order_status_history",
      () => tx`
      insert into replica.order_status_history (order_id, position, status, at)
      select o.id, k, (${STATUSES}::text[])[k + 1], o.created_at + make_interval(mins => 4 * k)
        from replica.orders o cross join generate_series(0, 4) k
       where o.id like 'ord_hist_%'`,
    );
    await timed(
      "replica.changes",
      () => tx`
      insert into replica.changes (resource, resource_id, merchant_id, operation, version, previous_version, status,
                                   previous_status, source, event_id, changed_at)
      select 'order', e.order_id, e.merchant_id, case when e.order_version = 1 then 'insert' else 'update' end,
             e.order_version, nullif(e.order_version - 1, 0), e.payload #>> '{data,status}',
             e.payload #>> '{data,previous_status}', e.source, e.id, e.outcome_at
        from sync.events e
       where e.id like 'evt_hist_%'
       order by e.received_at`,
    );
    await timed("indexes", async () => {
      for (const { definition } of dropped) await tx.unsafe(definition);
    });
  });
  await timed(vacuum ? "vacuum analyze" : "analyze", async () => {
    for (const table of [
      "sync.events",
      "replica.orders",
      "replica.order_items",
      "replica.order_status_history",
      "replica.changes",
    ])
      await sql.unsafe(`${vacuum ? "vacuum analyze" : "analyze"} ${table}`);
  });
  const [counts] = await sql<{ items: string; changes: string; bytes: string }[]>`
    select (select count(*) from replica.order_items where order_id like 'ord_hist_%') as items,
           (select count(*) from replica.changes where event_id like 'evt_hist_%') as changes,
           pg_database_size(current_database()) as bytes`;
  return {
    events,
    orders,
    items: Number(counts!.items),
    changes: Number(counts!.changes),
    merchantIds: Array.from({ length: merchants }, (_, i) => `mer_hist_${String(i).padStart(2, "0")}`),
    databaseBytes: Number(counts!.bytes),
    seconds: (performance.now() - started) / 1000,
    steps,
  };
}
