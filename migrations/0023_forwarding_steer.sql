-- Forwarding that operators can steer (DESIGN.md, "Forwarding"; docs/decisions.md, "Forwarding honours
-- Retry-After and a shared rate cap"): a hold after the endpoint's Retry-After, a rate cap shared by every
-- worker, and a heartbeat so status can tell forwarding that runs from forwarding that was turned off.

alter table sync.forward_progress
  -- A 429 or 503 with Retry-After: no worker claims a delivery before then.
  add column held_until timestamptz,
  -- Every forwarding worker touches it (about every 10 s); null after the last one stopped cleanly. Status
  -- calls forwarding off when it is null or a minute old: FORWARD_URL unset, or no worker running.
  add column seen_at timestamptz;

-- FORWARD_MAX_RPS, for every worker together: requests started per 100 ms slot over the last second.
create table sync.forward_rate (
  singleton boolean primary key default true check (singleton),
  -- The last slot written (epoch ms / 100); the ring's entries older than the window are stale.
  slot      bigint not null default 0,
  -- Requests started per slot, indexed by slot % 10 (+1).
  used      integer[] not null default array_fill(0, array[10])
);
insert into sync.forward_rate default values;

-- How many requests may start now under max_rps (at most a tenth of it per slot, so a second's budget is
-- spread over the second), and how long until the next slot (when to ask again for more). Locks the row until the caller's transaction ends:
-- call it, claim at most `room` deliveries, then sync.spend_forward_rate(claimed) in the same transaction.
create function sync.forward_rate_room(max_rps integer, out room integer, out wait_ms integer)
language plpgsql as $$
declare
  slot_ms constant integer := 100;
  slots constant integer := 10;
  now_ms bigint := floor(extract(epoch from clock_timestamp()) * 1000)::bigint;
  cur bigint := now_ms / slot_ms;
  r sync.forward_rate;
  total integer;
begin
  select * into r from sync.forward_rate for update;
  if not found then
    insert into sync.forward_rate default values on conflict do nothing;
    select * into r from sync.forward_rate for update;
  end if;
  -- A clock that stepped back keeps writing the newest slot (never a larger window).
  cur := greatest(cur, r.slot);
  if cur - r.slot >= slots then
    r.used := array_fill(0, array[slots]);
  else
    for i in 1 .. cur - r.slot loop
      r.used[((r.slot + i) % slots) + 1] := 0;
    end loop;
  end if;
  update sync.forward_rate set slot = cur, used = r.used;
  select coalesce(sum(u), 0) into total from unnest(r.used) u;
  room := greatest(0, least(max_rps - total, greatest(1, (max_rps + 9) / 10) - r.used[(cur % slots) + 1]));
  wait_ms := ((cur + 1) * slot_ms - now_ms)::integer;
end $$;

create function sync.spend_forward_rate(started integer) returns void
language sql as $$
  update sync.forward_rate set used[(slot % 10) + 1] = used[(slot % 10) + 1] + started;
$$;
