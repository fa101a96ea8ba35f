-- One budget of requests per second to Loops, shared by every process of a deployment (LOOPS_MAX_RPS).
-- A ring of 50 ms slots counts the tokens granted in each; a grant is allowed only while the last 24 slots
-- (1.2 s) stay within the budget, and a process sends a granted request before its slot ends. So any one
-- second at the upstream, even with up to 150 ms between a send and its arrival, sees at most the budget.
-- Every grant takes the one row's lock: one short statement per batch of tokens, never per request.
create table sync.request_budget (
  name           text primary key default 'loops',
  -- The last slot written (epoch ms / 50); the ring's entries older than the window are stale.
  slot           bigint not null default 0,
  -- Tokens granted per slot, indexed by slot % 24 (+1).
  used           integer[] not null default array_fill(0, array[24]),
  -- After a 429: the narrowed rate and until when it holds (the answer's Retry-After).
  narrowed_rps   integer,
  narrowed_at    timestamptz,
  narrowed_until timestamptz
);
insert into sync.request_budget default values;

-- Grants up to `want` tokens now. Background work (live = false) may fill only nine tenths of the budget, so
-- live order fetches of any process always find room. Answers how many were granted, how long they stay
-- valid (until the slot ends) and, when fewer than wanted, how long until the window has room again.
create function sync.take_request_tokens(want integer, max_rps integer, live boolean)
returns table (granted integer, valid_ms integer, wait_ms integer)
language plpgsql as $$
declare
  slot_ms constant integer := 50;
  slots constant integer := 24;
  now_ms bigint := floor(extract(epoch from clock_timestamp()) * 1000)::bigint;
  cur bigint := now_ms / slot_ms;
  b sync.request_budget;
  rate integer := max_rps;
  total integer := 0;
  room integer;
  oldest bigint;
begin
  select * into b from sync.request_budget where name = 'loops' for update;
  if not found then
    insert into sync.request_budget default values on conflict do nothing;
    select * into b from sync.request_budget where name = 'loops' for update;
  end if;
  if b.narrowed_until > clock_timestamp() then
    rate := least(rate, b.narrowed_rps);
  end if;
  -- A clock that stepped back keeps writing the newest slot (never a larger window).
  cur := greatest(cur, b.slot);
  if cur - b.slot >= slots then
    b.used := array_fill(0, array[slots]);
  else
    for i in 1 .. cur - b.slot loop
      b.used[((b.slot + i) % slots) + 1] := 0;
    end loop;
  end if;
  select coalesce(sum(u), 0) into total from unnest(b.used) u;
  room := (case when live then rate else rate - rate / 10 end) - total;
  -- At most a tenth of the budget per slot: a burst is spread over the second, not sent in 50 ms.
  room := least(room, greatest(1, (rate + 9) / 10) - b.used[(cur % slots) + 1]);
  granted := greatest(0, least(want, room));
  b.used[(cur % slots) + 1] := b.used[(cur % slots) + 1] + granted;
  update sync.request_budget set slot = cur, used = b.used where name = 'loops';
  valid_ms := ((cur + 1) * slot_ms - now_ms)::integer;
  wait_ms := 0;
  if granted < want then
    -- Room returns when the oldest slot with grants leaves the window, or at the next slot (per-slot cap).
    select min(s) into oldest
      from generate_series(cur - slots + 1, cur) s
     where b.used[(s % slots) + 1] > 0;
    wait_ms := case
      when total + granted < (case when live then rate else rate - rate / 10 end) then valid_ms
      else greatest(valid_ms, ((coalesce(oldest, cur) + slots) * slot_ms - now_ms)::integer)
    end;
  end if;
  return next;
end $$;

-- A 429 halves the shared rate until its Retry-After has passed; a burst of 429s within one second halves
-- it once.
create function sync.narrow_request_budget(max_rps integer, retry_after_seconds numeric)
returns void
language sql as $$
  update sync.request_budget
     set narrowed_rps = greatest(1, (case when narrowed_until > clock_timestamp()
                                          then least(narrowed_rps, max_rps) else max_rps end) / 2),
         narrowed_at = clock_timestamp(),
         narrowed_until = greatest(narrowed_until,
                                   clock_timestamp() + make_interval(secs => greatest(retry_after_seconds, 1)))
   where name = 'loops'
     and (narrowed_at is null or narrowed_at < clock_timestamp() - interval '1 second');
$$;

-- Scheduled ticks over every merchant (catch-up; reconcile can use the same): when the last run started,
-- by when it should have finished (the next tick of its cron), how far it got, and how often a run overran.
-- The status page and /metrics read it, so a tick that cannot keep up says so instead of piling up.
create table sync.scheduled_ticks (
  task                  text primary key,
  started_at            timestamptz not null,
  deadline              timestamptz,
  finished_at           timestamptz,
  items                 integer not null default 0,
  items_done            integer not null default 0,
  last_duration_seconds double precision,
  last_overran          boolean not null default false,
  overruns              bigint not null default 0
);
