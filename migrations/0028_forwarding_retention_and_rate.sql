-- Forwarding that is turned off no longer holds the change feed, and FORWARD_MAX_RPS holds exactly (issue 54).
-- Expand only: both functions keep their signatures, so the 0.1.0 worker and prune call the new bodies and
-- share the new rules at once; sync.forward_rate's slot ring (slot, used) is left unused, for a later release
-- to drop.

-- step: sync.forward_needed_from keeps changes for forwarding only while a forwarder runs
-- A forwarder records itself every 10 s (seen_at) and clears it when it stops; after a minute without one
-- (status's FORWARD_OFF_AFTER_SECONDS) forwarding is off and needs nothing whatever its age, so prune keeps
-- what it never received for RETENTION_DAYS, like any reader's, instead of from the last delivered change on
-- for ever.
create or replace function sync.forward_needed_from() returns bigint
language sql stable as $$
  select least(
           (select min(d.position) from sync.forward_deliveries d),
           (select p.scanned_through + 1 from sync.forward_progress p))
   where exists (select 1 from sync.forward_progress p where p.seen_at >= now() - interval '60 seconds')
$$;

comment on function sync.forward_needed_from() is
  'The lowest replica.changes position a running forwarder still needs (prune keeps every change at or above '
  'it); null when forwarding is off (no forwarder recorded itself within 60 s) or was never turned on.';

-- step: add sync.forward_rate.started_ms, the start times of the last second
alter table sync.forward_rate add column if not exists started_ms bigint[];

-- step: sync.forward_rate_room counts a sliding second, not 100 ms slots
-- The slot ring counted the last 10 slots, 0.9 to 1 s: any one-second window could hold the cap plus one
-- slot's tenth. Each start's time (epoch ms) is kept instead, and room is what keeps every window of
-- window_ms at or under max_rps, with at most a tenth of it in any 100 ms. window_ms is a second plus 50 ms:
-- a start is stamped when it is claimed and reaches the endpoint a little later (commit, the POST), and a
-- later claim's request may arrive sooner after its stamp than an earlier one's did; the margin keeps every
-- second at the endpoint within the cap. Locks the row until the caller's transaction ends: call it, claim
-- at most `room` deliveries, then sync.spend_forward_rate(claimed) in the same transaction. wait_ms: when a
-- claim that took all of `room` finds room again.
create or replace function sync.forward_rate_room(max_rps integer, out room integer, out wait_ms integer)
language plpgsql as $$
declare
  window_ms constant integer := 1050;
  spread_ms constant integer := 100;
  per_spread integer := greatest(1, (max_rps + 9) / 10);
  now_ms bigint := floor(extract(epoch from clock_timestamp()) * 1000)::bigint;
  starts bigint[];
  after_claim bigint[];
  n integer;
  free_at bigint := now_ms + 1;
begin
  select coalesce(started_ms, '{}') into starts from sync.forward_rate for update;
  if not found then
    insert into sync.forward_rate default values on conflict do nothing;
    select coalesce(started_ms, '{}') into starts from sync.forward_rate for update;
  end if;
  -- Only the window's starts, oldest first (a clock that stepped back keeps later stamps longer, never fewer).
  select coalesce(array_agg(s order by s), '{}') into starts from unnest(starts) s where s > now_ms - window_ms;
  update sync.forward_rate set started_ms = starts;
  room := greatest(0, least(
    max_rps - cardinality(starts),
    per_spread - (select count(*)::int from unnest(starts) s where s > now_ms - spread_ms)));
  -- After a claim of all of `room` (stamped now, the newest), room returns once the oldest start that fills
  -- the window, or the 100 ms spread, has left it.
  after_claim := starts || array_fill(now_ms, array[room]);
  n := cardinality(after_claim);
  if n >= max_rps then free_at := greatest(free_at, after_claim[n - max_rps + 1] + window_ms); end if;
  if n >= per_spread and after_claim[n - per_spread + 1] > now_ms - spread_ms then
    free_at := greatest(free_at, after_claim[n - per_spread + 1] + spread_ms);
  end if;
  wait_ms := (free_at - now_ms)::integer;
end $$;

-- step: sync.spend_forward_rate stamps each start
create or replace function sync.spend_forward_rate(started integer) returns void
language sql as $$
  update sync.forward_rate
     set started_ms = coalesce(started_ms, '{}')
                      || array_fill(floor(extract(epoch from clock_timestamp()) * 1000)::bigint, array[started]);
$$;
