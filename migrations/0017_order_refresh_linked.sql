-- Rows queued before migration 0008 name no event: a batch settled them by their order's open events, a
-- second path through the claim, the settle and the requeue. Each is linked instead to the open order
-- events of its order (one row per event, as the inbox queues them), so every batch settles its events by
-- id and the old path leaves the worker. A row whose order has no open event left was answered already:
-- nothing waits on it, and it goes.
insert into sync.order_refresh (merchant_id, order_id, version, event_id, queued_at)
select distinct on (e.id) r.merchant_id, r.order_id, e.order_version, e.id, r.queued_at
from sync.order_refresh r
join sync.events e on e.merchant_id = r.merchant_id and e.order_id = r.order_id
where r.event_id is null and e.type like 'order.%' and e.outcome in ('pending', 'failed')
  and not exists (select 1 from sync.order_refresh q where q.event_id = e.id)
order by e.id, r.queued_at;

delete from sync.order_refresh where event_id is null;
