-- Orders waiting for a fetch. process_events appends a row per order event the replica does not cover yet
-- (append-only, so it never waits on a row a running batch holds) and NOTIFYs loops_sync_order_refresh; the
-- worker's order refresher takes one merchant's lane at a time (a transaction advisory lock, so one
-- process works a lane and a burst of one order coalesces), claims up to a batch of rows with
-- `for update skip locked`, fetches the orders in parallel, applies them with one version-gated upsert,
-- settles their events with one update and deletes the claimed rows, all in one transaction: a crash rolls
-- the claim back and nothing is lost.
create table sync.order_refresh (
  id          bigint generated always as identity primary key,
  merchant_id text not null,
  order_id    text not null,
  -- The version the event announced; null when it did not say (then only a fetch can tell).
  version     bigint,
  -- Which of the merchant's 8 serial lanes takes it: one order always lands in the same lane.
  lane        smallint not null generated always as ((hashtext(order_id) & 7)::smallint) stored,
  queued_at   timestamptz not null default now()
);
create index order_refresh_merchant_lane_idx on sync.order_refresh (merchant_id, lane, id);
