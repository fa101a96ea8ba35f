-- Each queued order refresh names the event that queued it, so the batch that answers it settles exactly
-- its claimed events by primary key. Settling "this order's open events" instead joined every open event of
-- the merchant against the batch: with stale statistics Postgres compared each pending event with each
-- order (10 of a 14 ms statement in the freshness benchmark), and a backlog makes that quadratic.
-- Rows queued before this migration have no event id; a batch settles their orders the old way.
alter table sync.order_refresh add column event_id text;
