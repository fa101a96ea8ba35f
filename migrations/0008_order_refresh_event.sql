-- Each queued order refresh names the event that queued it, so the batch that answers it settles exactly
-- its claimed events by primary key. Settling "this order's open events" instead joined every open event of
-- the merchant against the batch: with stale statistics Postgres compared each pending event with each
-- order (10 of a 14 ms statement in the freshness benchmark), and a backlog makes that quadratic.
-- Rows queued before this migration have no event id; a batch settles their orders the old way.
alter table sync.order_refresh add column event_id text;

-- Batches no longer take one of eight serial lanes per merchant: a batch claims the merchant's queued rows
-- whose orders no other batch is fetching (an advisory lock per order), so an event never waits for a lane
-- busy with other orders (freshness p50 at 1,000 events/s: 137–145 → 67–68 ms, A/B in bench/README.md).
drop index sync.order_refresh_merchant_lane_idx;
alter table sync.order_refresh drop column lane;
create index order_refresh_merchant_idx on sync.order_refresh (merchant_id, id);
