-- Orders waiting for a fetch, per merchant and lane. process_events appends a row per order event the
-- replica does not cover yet (append-only, so it never waits on a row a refresh holds); one refresh_orders
-- job per merchant and lane (a hash of the order id, so one order always lands in the same lane and its
-- events coalesce) claims up to a batch of rows with `for update skip locked`, fetches the orders in parallel,
-- applies them with one version-gated upsert and settles their events with one update, and deletes the
-- claimed rows in the same transaction. A crash rolls the claim back: nothing is lost.
create table sync.order_refresh (
  id          bigint generated always as identity primary key,
  merchant_id text not null,
  order_id    text not null,
  -- The version the event announced; null when it did not say (then only a fetch can tell).
  version     bigint,
  -- Which of the merchant's serial refresh queues takes it (orderLane in apps/worker/src/refreshOrders.ts).
  lane        smallint not null default 0,
  queued_at   timestamptz not null default now()
);
create index order_refresh_merchant_lane_idx on sync.order_refresh (merchant_id, lane, id);
