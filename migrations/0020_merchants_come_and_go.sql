-- Merchants come and go (issue 41): the connection a merchant's state is about, the refused route a pause
-- probes, order ids read from every payload shape, the last full listing of a merchant's locations, and the
-- reporting views that show a revoked connection and count a delivery order at picked_up as in progress.

-- The connection the merchant's status speaks of: the active one GET /connection answered, the one a
-- revocation named, or the new one a revoked merchant's event named while GET /connection confirms it. A
-- revocation naming another connection is stale (a reconnect came since) and revokes nothing else; an event
-- of a revoked merchant naming another connection starts a reconnect.
alter table sync.merchants add column connection_id text;

-- The start of the newest complete listing of the merchant's locations and channel connections that was
-- written: a listing that started earlier (a reconcile that listed before go-live) is not written over it.
alter table sync.merchants add column locations_listed_at timestamptz;

-- The route of the refused call (the spec's template, e.g. /events): the probe calls it, not GET /orders.
alter table sync.upstream_pauses add column route text;

-- Order events' payloads are "not shown" in the spec beyond order.status_changed's order_id: read the order
-- id from data.order_id, else (order.* events only) data.order.id or data.id. A generated column cannot
-- change its expression before Postgres 17, so it is dropped and added again (one rewrite of the inbox).
drop index sync.events_order_idx;
alter table sync.events drop column order_id;
alter table sync.events add column order_id text generated always as (
  coalesce(
    case when jsonb_typeof(payload #> '{data,order_id}') = 'string' then payload #>> '{data,order_id}' end,
    case when payload ->> 'type' like 'order.%' then
      coalesce(
        case when jsonb_typeof(payload #> '{data,order,id}') = 'string' then payload #>> '{data,order,id}' end,
        case when jsonb_typeof(payload #> '{data,id}') = 'string' then payload #>> '{data,id}' end)
    end)
) stored;
create index events_order_idx on sync.events (order_id) where order_id is not null;

-- In progress = not final: a delivery order at picked_up is still en route (only a pickup order ends there,
-- as reporting.orders.is_final says).
create or replace view reporting.order_outcomes as
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
  count(*) filter (where not is_final)::bigint                                as in_progress_count,
  round(count(*) filter (where status = 'delivered')::numeric / count(*), 4)  as delivered_rate,
  round(count(*) filter (where status = 'rejected')::numeric / count(*), 4)   as rejected_rate,
  round(count(*) filter (where status = 'cancelled')::numeric / count(*), 4)  as cancelled_rate
from reporting.orders
group by merchant_id, location_id, channel, local_date;

-- sync_health gains the merchant's connection as mirrored: a revoked merchant shows its revoked connection.
create or replace view reporting.sync_health as
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
  extract(epoch from now() - a.last_applied_event_created_at)       as applied_lag_seconds,
  p.pending_events,
  p.oldest_pending_received_at,
  extract(epoch from now() - p.oldest_pending_received_at)          as oldest_pending_age_seconds,
  f.failed_events,
  conn.id                                                            as connection_id,
  conn.status                                                        as connection_status
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
) f
-- The connection the merchant's state names, else its newest mirrored one.
left join lateral (
  select rc.id, rc.status from replica.connections rc
  where rc.merchant_id = ids.merchant_id
  order by rc.id = m.connection_id desc nulls last, rc.created_at desc nulls last, rc.synced_at desc
  limit 1
) conn on true;
