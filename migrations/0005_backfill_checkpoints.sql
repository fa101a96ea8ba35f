-- Order backfill (GET /orders?updated_since=…) per merchant: the watermark of the last completed run and the
-- resumable checkpoint of the run in progress. Each list page is applied and its checkpoint advanced in
-- one transaction, so a crash resumes at the next page.
create table sync.backfills (
  merchant_id          text primary key,
  -- Where the next run starts: updated_since for the orders not yet seen. Null: never completed (all history).
  watermark            timestamptz,
  last_completed_at    timestamptz,
  -- The run in progress; run_started_at is null when none is.
  run_started_at       timestamptz,
  -- updated_since of the run in progress (null: all history).
  run_since            timestamptz,
  -- The watermark this run will leave when it completes (newest updated_at on its first page, minus a margin).
  run_next_watermark   timestamptz,
  -- next_cursor of the last page applied; null before the first page.
  run_page_cursor      text,
  run_pages            integer not null default 0,
  run_orders_seen      bigint not null default 0,
  run_orders_changed   bigint not null default 0,
  last_run_status      text,
  last_run_error       text,
  updated_at           timestamptz not null default now()
);
