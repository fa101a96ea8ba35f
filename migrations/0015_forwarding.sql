-- Forwarding (DESIGN.md, "Forwarding"): the worker POSTs each change of replica.changes to the partner's own
-- endpoint, at least once, per resource in position order. The state lives here so it survives a crash and is
-- shared by every worker process (docs/decisions.md, "Forwarding claims deliveries by lease").
--
-- A scan copies the feed's new changes into sync.forward_deliveries, under the lock of the progress row, so one
-- worker scans at a time; the feed commits its positions in order, so a cursor read misses none. A delivery row
-- lives until its change was acknowledged (then it is deleted) or it is dead (dead_at set; kept until a retry).

-- One row, created by the first worker that forwards: where the scan of the feed stands, and the endpoint's
-- last answers (for status).
create table sync.forward_progress (
  singleton        boolean primary key default true check (singleton),
  -- Every change up to this position is in sync.forward_deliveries, was delivered, or was left out by
  -- FORWARD_RESOURCES. Forwarding starts after the newest change at the moment it was first turned on.
  scanned_through  bigint not null,
  -- FORWARD_URL without its query or credentials, as the last worker that started saw it.
  endpoint         text,
  started_at       timestamptz not null default now(),
  last_success_at  timestamptz,
  last_failure_at  timestamptz,
  -- The last failure, short: "HTTP 503", "timeout after 10000 ms", "connection refused".
  last_failure     text
);

create table sync.forward_deliveries (
  position         bigint primary key,
  resource         text not null,
  resource_id      text not null,
  changed_at       timestamptz not null,
  -- FORWARD_MAX_AGE_HOURS is counted from here: the change's commit, or the retry that revived it.
  age_from         timestamptz not null,
  attempts         integer not null default 0,
  next_attempt_at  timestamptz not null default now(),
  -- A worker sending it holds it until then; a worker killed mid-delivery loses it when it expires.
  leased_until     timestamptz,
  leased_by        text,
  last_error       text,
  dead_at          timestamptz
);
-- A change is due only when no earlier live change of its resource is left (the claim's NOT EXISTS).
create index forward_deliveries_resource_idx on sync.forward_deliveries (resource, resource_id, position)
  where dead_at is null;
create index forward_deliveries_live_idx on sync.forward_deliveries (position) where dead_at is null;
create index forward_deliveries_dead_idx on sync.forward_deliveries (position) where dead_at is not null;

-- For prune (and anyone else who deletes changes): the lowest position forwarding still needs. Every change
-- at or above it must be kept: those not yet scanned, and every undelivered one, dead ones included (a retry
-- re-sends them). Null when forwarding was never turned on: it needs none.
create function sync.forward_needed_from() returns bigint
language sql stable as $$
  select least(
           (select min(d.position) from sync.forward_deliveries d),
           (select p.scanned_through + 1 from sync.forward_progress p))
$$;

comment on function sync.forward_needed_from() is
  'The lowest replica.changes position forwarding still needs (prune keeps every change at or above it); '
  'null when forwarding was never turned on.';

create function sync.forward_keeps(change_position bigint) returns boolean
language sql stable as $$
  select coalesce(change_position >= sync.forward_needed_from(), false)
$$;

comment on function sync.forward_keeps(bigint) is
  'True when forwarding still needs the change at this position (not yet delivered, dead, or not yet scanned).';
