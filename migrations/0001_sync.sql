-- Machinery of the sync: the event inbox, per-merchant state and catch-up cursors.
create schema if not exists sync;

create table sync.merchants (
  id              text primary key,
  status          text not null default 'active' check (status in ('active', 'revoked')),
  revoked_at      timestamptz,
  -- Set from a 429's Retry-After: no API call for this merchant before then.
  paused_until    timestamptz,
  -- How we learned of it: 'config' (LOOPS_MERCHANT_IDS), 'webhook', 'catchup', 'cli'.
  learned_from    text not null default 'config',
  first_seen_at   timestamptz not null default now()
);

-- The inbox: one row per upstream event id (= webhook-id). The primary key is the dedupe.
create table sync.events (
  id                    text primary key,
  type                  text not null,
  merchant_id           text not null,
  location_id           text,
  connection_id         text,
  origin_type           text,
  origin_application_id text,
  created_at            timestamptz not null,
  received_at           timestamptz not null default now(),
  -- How it arrived: 'webhook', 'catchup' (GET /events) or 'cli'.
  source                text not null check (source in ('webhook', 'catchup', 'cli')),
  -- The envelope exactly as received (unknown fields kept).
  payload               jsonb not null,
  -- What was done with it.
  outcome               text not null default 'pending'
                        check (outcome in ('pending', 'applied', 'stale', 'ignored_self', 'unhandled', 'failed', 'skipped_revoked')),
  outcome_at            timestamptz,
  error                 text,
  -- For order.* events: the order and the version the event speaks of (null when the payload has none).
  order_id              text generated always as (payload -> 'data' ->> 'order_id') stored,
  order_version         bigint generated always as (
                          case when jsonb_typeof(payload -> 'data' -> 'version') = 'number'
                               then (payload -> 'data' ->> 'version')::numeric::bigint end) stored
);

create index events_merchant_created_idx on sync.events (merchant_id, created_at);
create index events_received_idx on sync.events (received_at);
create index events_merchant_source_received_idx on sync.events (merchant_id, source, received_at);
create index events_open_idx on sync.events (outcome, received_at) where outcome in ('pending', 'failed');
create index events_order_idx on sync.events (order_id) where order_id is not null;

-- Catch-up position in GET /events, per merchant; advanced in the transaction that stores the page.
create table sync.cursors (
  merchant_id          text primary key,
  after_event_id       text,
  after_created_at     timestamptz,
  events_stored        bigint not null default 0,
  last_run_started_at  timestamptz,
  last_run_finished_at timestamptz,
  last_run_status      text,
  last_run_error       text,
  updated_at           timestamptz not null default now()
);
