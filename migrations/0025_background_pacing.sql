-- Background work paces itself (issue 52). Expand only: the 0.1.0 worker keeps running on this schema.
-- Each merchant's last complete reconcile is kept, so a process start calls Loops only for what is due and
-- the reconcile runs as a trickle at each merchant's own offset; the scheduled-run row shows the interval the
-- trickle keeps beside the configured one; background work can be held to a share of the request budget.

-- step: add sync.merchants.reconciled_at and reconcile_calls
alter table sync.merchants add column if not exists reconciled_at timestamptz;
-- squawk-ignore prefer-bigint-over-int: the calls of one merchant's reconcile, a few dozen at most
alter table sync.merchants add column if not exists reconcile_calls integer;

-- step: add the configured and effective interval to sync.scheduled_ticks
alter table sync.scheduled_ticks add column if not exists interval_seconds double precision;
alter table sync.scheduled_ticks add column if not exists effective_interval_seconds double precision;

-- step: sync.take_request_tokens with a share for background work
-- The 0014 function with one more argument (an overload: 0.1.0 keeps calling the three-argument one).
-- Background grants (live = false) stop once the window holds `background_share` of the rate, and take at most
-- that share of each 50 ms slot's tenth, so live order fetches always find the rest of the budget free,
-- whatever background work is queued. Confirmations ask with the three-argument form (nine tenths).
create or replace function sync.take_request_tokens(want integer, max_rps integer, live boolean,
                                                    background_share numeric)
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
  cap integer;
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
  cur := greatest(cur, b.slot);
  if cur - b.slot >= slots then
    b.used := array_fill(0, array[slots]);
  else
    for i in 1 .. cur - b.slot loop
      b.used[((b.slot + i) % slots) + 1] := 0;
    end loop;
  end if;
  select coalesce(sum(u), 0) into total from unnest(b.used) u;
  cap := case when live then rate
                  else greatest(1, least(rate - rate / 10,
                                         floor(rate * least(greatest(background_share, 0), 1))::integer)) end;
  room := cap - total;
  -- Per slot too: background takes at most its share of a slot's tenth, so a live fetch finds room in every slot.
  room := least(room, (case when live then greatest(1, (rate + 9) / 10)
                            else greatest(1, floor(((rate + 9) / 10) * least(greatest(background_share, 0), 1))::integer)
                       end) - b.used[(cur % slots) + 1]);
  granted := greatest(0, least(want, room));
  b.used[(cur % slots) + 1] := b.used[(cur % slots) + 1] + granted;
  update sync.request_budget set slot = cur, used = b.used where name = 'loops';
  valid_ms := ((cur + 1) * slot_ms - now_ms)::integer;
  wait_ms := 0;
  if granted < want then
    select min(s) into oldest
      from generate_series(cur - slots + 1, cur) s
     where b.used[(s % slots) + 1] > 0;
    wait_ms := case
      when total + granted < cap then valid_ms
      else greatest(valid_ms, ((coalesce(oldest, cur) + slots) * slot_ms - now_ms)::integer)
    end;
  end if;
  return next;
end $$;
