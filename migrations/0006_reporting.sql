-- Views for SQL users over the replica. Plain views: they read replica.* live, so they follow every order
-- change the worker applies. Money is in minor units (halalas for SAR) beside its currency, never mixed:
-- every money aggregate groups by currency. Days are the location's local calendar day.
create schema if not exists reporting;

-- A location's zone as Postgres knows it; 'Asia/Riyadh' when absent or unknown to this server's tz database,
-- so one odd location never makes the whole view fail.
create function reporting.zone_or_default(zone text) returns text
language plpgsql stable as $$
begin
  if zone is null or zone = '' then
    return 'Asia/Riyadh';
  end if;
  perform now() at time zone zone;
  return zone;
exception when invalid_parameter_value then
  return 'Asia/Riyadh';
end
$$;

-- One row per order with its local day and the flags the other views group on.
create view reporting.orders as
with zones as materialized (
  select id, name_en, name_ar, reporting.zone_or_default(timezone) as timezone from replica.locations
)
select
  o.id                                                              as order_id,
  o.merchant_id,
  o.location_id,
  z.name_en                                                         as location_name_en,
  z.name_ar                                                         as location_name_ar,
  coalesce(z.timezone, 'Asia/Riyadh')                               as timezone,
  o.channel,
  o.channel_ref,
  o.type                                                            as order_type,
  o.status,
  o.status in ('delivered', 'rejected', 'cancelled')                as is_final,
  -- Rejected and cancelled orders are no sale; everything else (open ones included) is.
  o.status not in ('rejected', 'cancelled')                         as is_sale,
  (o.created_at at time zone coalesce(z.timezone, 'Asia/Riyadh'))::date as local_date,
  o.created_at at time zone coalesce(z.timezone, 'Asia/Riyadh')     as local_created_at,
  o.created_at,
  o.updated_at,
  o.version,
  o.currency,
  coalesce(o.subtotal_amount, 0)                                    as subtotal_amount,
  coalesce(o.discount_amount, 0)                                    as discount_amount,
  coalesce(o.delivery_fee_amount, 0)                                as delivery_fee_amount,
  coalesce(o.tax_amount, 0)                                         as tax_amount,
  coalesce(o.total_amount, 0)                                       as total_amount
from replica.orders o
left join zones z on z.id = o.location_id;

-- Sales per merchant, location, channel and local day. Money sums count sales only (not rejected/cancelled).
create view reporting.daily_sales as
select
  merchant_id,
  location_id,
  location_name_en,
  location_name_ar,
  timezone,
  channel,
  local_date,
  currency,
  count(*)::bigint                                    as orders_count,
  count(*) filter (where is_sale)::bigint             as sales_orders_count,
  count(*) filter (where status = 'rejected')::bigint  as rejected_orders_count,
  count(*) filter (where status = 'cancelled')::bigint as cancelled_orders_count,
  coalesce(sum(subtotal_amount) filter (where is_sale), 0)::bigint     as subtotal_amount,
  coalesce(sum(discount_amount) filter (where is_sale), 0)::bigint     as discount_amount,
  coalesce(sum(delivery_fee_amount) filter (where is_sale), 0)::bigint as delivery_fee_amount,
  coalesce(sum(tax_amount) filter (where is_sale), 0)::bigint          as tax_amount,
  coalesce(sum(total_amount) filter (where is_sale), 0)::bigint        as total_amount,
  round(avg(total_amount) filter (where is_sale))::bigint              as average_total_amount
from reporting.orders
group by merchant_id, location_id, location_name_en, location_name_ar, timezone, channel, local_date, currency;

-- Orders by current status per merchant, location, channel and local day; rates are shares of orders_count.
create view reporting.order_outcomes as
select
  merchant_id,
  location_id,
  channel,
  local_date,
  count(*)::bigint                                                            as orders_count,
  count(*) filter (where status = 'delivered')::bigint                        as delivered_count,
  count(*) filter (where status = 'rejected')::bigint                         as rejected_count,
  count(*) filter (where status = 'cancelled')::bigint                        as cancelled_count,
  count(*) filter (where status = 'picked_up')::bigint                        as picked_up_count,
  count(*) filter (where status not in ('delivered', 'rejected', 'cancelled', 'picked_up'))::bigint
                                                                              as in_progress_count,
  round(count(*) filter (where status = 'delivered')::numeric / count(*), 4)  as delivered_rate,
  round(count(*) filter (where status = 'rejected')::numeric / count(*), 4)   as rejected_rate,
  round(count(*) filter (where status = 'cancelled')::numeric / count(*), 4)  as cancelled_rate
from reporting.orders
group by merchant_id, location_id, channel, local_date;

-- Per order: when it first reached each stage (from status history) and the seconds between stages.
-- A duration is null when either stamp is missing or the later one precedes the earlier.
create view reporting.stage_durations as
select
  r.order_id,
  r.merchant_id,
  r.location_id,
  r.channel,
  r.local_date,
  r.status,
  h.placed_at,
  h.accepted_at,
  h.ready_at,
  h.picked_up_at,
  case when h.accepted_at >= h.placed_at then extract(epoch from h.accepted_at - h.placed_at) end
    as placed_to_accepted_seconds,
  case when h.ready_at >= h.accepted_at then extract(epoch from h.ready_at - h.accepted_at) end
    as accepted_to_ready_seconds,
  case when h.picked_up_at >= h.ready_at then extract(epoch from h.picked_up_at - h.ready_at) end
    as ready_to_picked_up_seconds
from reporting.orders r
cross join lateral (
  select
    min(at) filter (where status = 'placed')    as placed_at,
    min(at) filter (where status = 'accepted')  as accepted_at,
    min(at) filter (where status = 'ready')     as ready_at,
    min(at) filter (where status = 'picked_up') as picked_up_at
  from replica.order_status_history sh
  where sh.order_id = r.order_id
) h;

-- Stage durations as percentiles (seconds, continuous interpolation) per location and channel, all time.
create view reporting.stage_duration_percentiles as
select
  merchant_id,
  location_id,
  channel,
  count(*)::bigint                                                                       as orders_count,
  count(placed_to_accepted_seconds)::bigint                                              as placed_to_accepted_samples,
  round(percentile_cont(0.5) within group (order by placed_to_accepted_seconds)::numeric, 1) as placed_to_accepted_p50_seconds,
  round(percentile_cont(0.9) within group (order by placed_to_accepted_seconds)::numeric, 1) as placed_to_accepted_p90_seconds,
  round(percentile_cont(0.99) within group (order by placed_to_accepted_seconds)::numeric, 1) as placed_to_accepted_p99_seconds,
  count(accepted_to_ready_seconds)::bigint                                               as accepted_to_ready_samples,
  round(percentile_cont(0.5) within group (order by accepted_to_ready_seconds)::numeric, 1) as accepted_to_ready_p50_seconds,
  round(percentile_cont(0.9) within group (order by accepted_to_ready_seconds)::numeric, 1) as accepted_to_ready_p90_seconds,
  round(percentile_cont(0.99) within group (order by accepted_to_ready_seconds)::numeric, 1) as accepted_to_ready_p99_seconds,
  count(ready_to_picked_up_seconds)::bigint                                              as ready_to_picked_up_samples,
  round(percentile_cont(0.5) within group (order by ready_to_picked_up_seconds)::numeric, 1) as ready_to_picked_up_p50_seconds,
  round(percentile_cont(0.9) within group (order by ready_to_picked_up_seconds)::numeric, 1) as ready_to_picked_up_p90_seconds,
  round(percentile_cont(0.99) within group (order by ready_to_picked_up_seconds)::numeric, 1) as ready_to_picked_up_p99_seconds
from reporting.stage_durations
group by merchant_id, location_id, channel;

-- The same per local day, for trends and date windows.
create view reporting.daily_stage_duration_percentiles as
select
  merchant_id,
  location_id,
  channel,
  local_date,
  count(*)::bigint                                                                       as orders_count,
  count(placed_to_accepted_seconds)::bigint                                              as placed_to_accepted_samples,
  round(percentile_cont(0.5) within group (order by placed_to_accepted_seconds)::numeric, 1) as placed_to_accepted_p50_seconds,
  round(percentile_cont(0.9) within group (order by placed_to_accepted_seconds)::numeric, 1) as placed_to_accepted_p90_seconds,
  round(percentile_cont(0.99) within group (order by placed_to_accepted_seconds)::numeric, 1) as placed_to_accepted_p99_seconds,
  count(accepted_to_ready_seconds)::bigint                                               as accepted_to_ready_samples,
  round(percentile_cont(0.5) within group (order by accepted_to_ready_seconds)::numeric, 1) as accepted_to_ready_p50_seconds,
  round(percentile_cont(0.9) within group (order by accepted_to_ready_seconds)::numeric, 1) as accepted_to_ready_p90_seconds,
  round(percentile_cont(0.99) within group (order by accepted_to_ready_seconds)::numeric, 1) as accepted_to_ready_p99_seconds,
  count(ready_to_picked_up_seconds)::bigint                                              as ready_to_picked_up_samples,
  round(percentile_cont(0.5) within group (order by ready_to_picked_up_seconds)::numeric, 1) as ready_to_picked_up_p50_seconds,
  round(percentile_cont(0.9) within group (order by ready_to_picked_up_seconds)::numeric, 1) as ready_to_picked_up_p90_seconds,
  round(percentile_cont(0.99) within group (order by ready_to_picked_up_seconds)::numeric, 1) as ready_to_picked_up_p99_seconds
from reporting.stage_durations
group by merchant_id, location_id, channel, local_date;

-- Items sold per merchant, location and local day (sales only). Revenue is quantity x unit price of the item
-- itself; its modifiers are counted in reporting.modifier_sales.
create view reporting.item_sales as
select
  r.merchant_id,
  r.location_id,
  r.local_date,
  i.sku,
  i.name_en,
  i.name_ar,
  i.currency,
  sum(i.quantity)::bigint                       as quantity_sold,
  sum(i.quantity * i.unit_price_amount)::bigint as revenue_amount,
  count(distinct r.order_id)::bigint            as orders_count
from reporting.orders r
join replica.order_items i on i.order_id = r.order_id
where r.is_sale
group by r.merchant_id, r.location_id, r.local_date, i.sku, i.name_en, i.name_ar, i.currency;

-- Modifiers sold per merchant, location and local day (sales only). A modifier's quantity is per unit of its
-- item, so units sold = item quantity x modifier quantity.
create view reporting.modifier_sales as
select
  r.merchant_id,
  r.location_id,
  r.local_date,
  m.name_en,
  m.name_ar,
  m.currency,
  sum(i.quantity * m.quantity)::bigint                       as quantity_sold,
  sum(i.quantity * m.quantity * m.unit_price_amount)::bigint as revenue_amount,
  count(distinct r.order_id)::bigint                         as orders_count
from reporting.orders r
join replica.order_items i on i.order_id = r.order_id
join replica.order_item_modifiers m on m.order_id = i.order_id and m.item_position = i.position
where r.is_sale
group by r.merchant_id, r.location_id, r.local_date, m.name_en, m.name_ar, m.currency;

-- Best sellers per merchant over all time, ranked by units and by revenue (1 = best; ties share a rank).
create view reporting.top_items as
select
  merchant_id,
  sku,
  name_en,
  name_ar,
  currency,
  quantity_sold,
  revenue_amount,
  orders_count,
  rank() over (partition by merchant_id order by quantity_sold desc)            as quantity_rank,
  rank() over (partition by merchant_id, currency order by revenue_amount desc) as revenue_rank
from (
  select merchant_id, sku, name_en, name_ar, currency,
         sum(quantity_sold)::bigint as quantity_sold,
         sum(revenue_amount)::bigint as revenue_amount,
         sum(orders_count)::bigint as orders_count
  from reporting.item_sales
  group by merchant_id, sku, name_en, name_ar, currency
) t;

create view reporting.top_modifiers as
select
  merchant_id,
  name_en,
  name_ar,
  currency,
  quantity_sold,
  revenue_amount,
  orders_count,
  rank() over (partition by merchant_id order by quantity_sold desc)            as quantity_rank,
  rank() over (partition by merchant_id, currency order by revenue_amount desc) as revenue_rank
from (
  select merchant_id, name_en, name_ar, currency,
         sum(quantity_sold)::bigint as quantity_sold,
         sum(revenue_amount)::bigint as revenue_amount,
         sum(orders_count)::bigint as orders_count
  from reporting.modifier_sales
  group by merchant_id, name_en, name_ar, currency
) t;

-- Per merchant: is the sync keeping up? One row for every merchant we know of (inbox or cursor).
create view reporting.sync_health as
select
  ids.merchant_id,
  coalesce(m.status, 'active')                                      as merchant_status,
  m.revoked_at,
  m.paused_until,
  c.after_event_id                                                   as cursor_event_id,
  c.after_created_at                                                 as cursor_created_at,
  c.last_run_started_at                                              as last_catchup_started_at,
  c.last_run_finished_at                                             as last_catchup_finished_at,
  c.last_run_status                                                  as last_catchup_status,
  w.last_webhook_received_at,
  a.last_applied_event_created_at,
  a.last_applied_at,
  -- How far behind upstream the replica is: age of the newest event already applied.
  extract(epoch from now() - a.last_applied_event_created_at)       as applied_lag_seconds,
  p.pending_events,
  p.oldest_pending_received_at,
  extract(epoch from now() - p.oldest_pending_received_at)          as oldest_pending_age_seconds,
  f.failed_events
from (select id as merchant_id from sync.merchants union select merchant_id from sync.cursors) ids
left join sync.merchants m on m.id = ids.merchant_id
left join sync.cursors c on c.merchant_id = ids.merchant_id
cross join lateral (
  select max(received_at) as last_webhook_received_at
  from sync.events e where e.merchant_id = ids.merchant_id and e.source = 'webhook'
) w
left join lateral (
  select e.created_at as last_applied_event_created_at, e.outcome_at as last_applied_at
  from sync.events e where e.merchant_id = ids.merchant_id and e.outcome = 'applied'
  order by e.created_at desc limit 1
) a on true
cross join lateral (
  select count(*)::bigint as pending_events, min(received_at) as oldest_pending_received_at
  from sync.events e where e.merchant_id = ids.merchant_id and e.outcome = 'pending'
) p
cross join lateral (
  select count(*)::bigint as failed_events
  from sync.events e where e.merchant_id = ids.merchant_id and e.outcome = 'failed'
) f;
