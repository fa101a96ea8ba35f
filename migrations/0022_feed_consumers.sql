-- Feed consumers (DESIGN.md, "Feed consumers (cursors kept by Postgres)"): a named cursor over replica.changes
-- that several instances of one backend share. Each change goes to one instance at a time (a lease), in order
-- per resource, and counts as handled once acknowledged; an ack inside the backend's own transaction makes its
-- handling exactly-once for writes in the same database (docs/decisions.md, "Feed consumers lease changes").
--
-- State: a consumer's floor (acked_through: every matching change at or below it is acknowledged), and one
-- lease row per change above the floor that was handed out (leased_until) or acknowledged out of order
-- (acked_at). receive_changes advances the floor over the acknowledged prefix and drops those rows, so the
-- lease table holds about what is in flight.
--
-- Gap-free (migration 0011): the floor only moves to a position seen in the same statement as every lower
-- position, and positions commit in order, so a change that commits later always lands above the floor.
--
-- The functions are security definer with a fixed search_path and not executable by PUBLIC: a consumer role
-- (`loops-sync grant consumer ROLE`) gets EXECUTE on exactly these four and changes consumer state only through
-- them. The tables live in sync, where readers have no access.

create table sync.feed_consumers (
  name           text primary key check (name ~ '^[A-Za-z0-9][A-Za-z0-9_.:-]{0,62}$'),
  -- Null: every resource (every merchant). Never empty: an empty filter would match nothing.
  resources      text[] check (cardinality(resources) > 0),
  merchant_ids   text[] check (cardinality(merchant_ids) > 0),
  acked_through  bigint not null check (acked_through >= 0),
  created_at     timestamptz not null default now(),
  last_receive_at timestamptz
);

create table sync.feed_consumer_leases (
  consumer_name  text not null references sync.feed_consumers (name) on delete cascade,
  position       bigint not null,
  -- Until then it is handed to no one else; null once acknowledged.
  leased_until   timestamptz,
  -- How often it was handed out: above 1 means an instance did not acknowledge it in time.
  deliveries     integer not null default 1,
  acked_at       timestamptz,
  primary key (consumer_name, position)
);

-- Wakes waiting instances when an ack may have unblocked a resource's next change (payload: the consumer).
-- Delivered at commit, never for a rollback.
comment on table sync.feed_consumers is
  'Named feed consumers (replica.create_consumer). NOTIFY loops_sync_consumers follows each commit that acknowledged changes.';

create function sync.check_consumer_filter(resources text[], merchant_ids text[]) returns void
language plpgsql immutable set search_path = pg_catalog, pg_temp as $$
declare
  bad text;
begin
  if resources is not null then
    if cardinality(resources) = 0 then
      raise exception 'resources must be null (every resource) or name at least one' using errcode = '22023';
    end if;
    select r into bad from unnest(resources) r
      where r is null or r not in ('order', 'location', 'channel_connection', 'brand', 'menu', 'merchant',
                                   'connection', 'job', 'channel')
      limit 1;
    if found then
      raise exception 'unknown resource %: expected order, location, channel_connection, brand, menu, merchant, connection, job or channel', coalesce(bad, 'null')
        using errcode = '22023';
    end if;
  end if;
  if merchant_ids is not null then
    if cardinality(merchant_ids) = 0 or array_position(merchant_ids, null) is not null
       or array_position(merchant_ids, '') is not null then
      raise exception 'merchant_ids must be null (every merchant) or non-empty ids' using errcode = '22023';
    end if;
  end if;
end $$;

-- The feed, optionally only some resources and merchants. Replaces the two-argument form (0011); old callers'
-- read_changes(after) and read_changes(after, max_rows) resolve to this one. Grants on the old form carry over.
create temporary table read_changes_grants on commit drop as
  select pg_get_userbyid(a.grantee) as grantee
  from pg_proc p, aclexplode(p.proacl) a
  where p.oid = 'replica.read_changes(bigint, integer)'::regprocedure and a.privilege_type = 'EXECUTE'
    and a.grantee <> 0 and a.grantee <> p.proowner;
create temporary table read_changes_public on commit drop as
  select p.proacl is null or exists (select 1 from aclexplode(p.proacl) a where a.grantee = 0) as public
  from pg_proc p where p.oid = 'replica.read_changes(bigint, integer)'::regprocedure;

drop function replica.read_changes(bigint, integer);

create function replica.read_changes(after bigint, max_rows integer default 1000, resources text[] default null,
                                     merchant_ids text[] default null)
returns setof replica.changes
language plpgsql stable as $$
declare
  pruned bigint;
begin
  if after is null or after < 0 then
    raise exception 'read_changes: after must be a position >= 0 (0 reads from the start), got %', after
      using errcode = '22023';
  end if;
  if max_rows is null or max_rows < 1 or max_rows > 10000 then
    raise exception 'read_changes: max_rows must be between 1 and 10000, got %', max_rows using errcode = '22023';
  end if;
  -- Checked here, not by a helper in sync: a reader role has nothing there.
  if resources is not null and (cardinality(resources) = 0 or not resources <@ array['order', 'location',
       'channel_connection', 'brand', 'menu', 'merchant', 'connection', 'job', 'channel']) then
    raise exception 'read_changes: resources must be null (every resource) or some of order, location, channel_connection, brand, menu, merchant, connection, job, channel, got %', resources
      using errcode = '22023';
  end if;
  if merchant_ids is not null and (cardinality(merchant_ids) = 0 or array_position(merchant_ids, null) is not null) then
    raise exception 'read_changes: merchant_ids must be null (every merchant) or non-empty ids, got %', merchant_ids
      using errcode = '22023';
  end if;
  select s.pruned_through into pruned from replica.change_feed_state s;
  if after < pruned then
    raise exception 'changes_expired: changes up to position % were pruned (RETENTION_DAYS); a reader at % may have missed some', pruned, after
      using errcode = 'LS410',
            hint = 'Resynchronise from the replica tables, then read on after position ' || pruned || '.';
  end if;
  return query
    select * from replica.changes c
    where c.position > after
      and (read_changes.resources is null or c.resource = any(read_changes.resources))
      and (read_changes.merchant_ids is null or c.merchant_id = any(read_changes.merchant_ids))
    order by c.position limit max_rows;
end $$;

comment on function replica.read_changes(bigint, integer, text[], text[]) is
  'Changes with position > after, in position order, at most max_rows; with resources and/or merchant_ids only '
  'those (null: all). A reader that always continues after the last position it processed sees every '
  'committed change exactly once, in order. Raises changes_expired (SQLSTATE LS410) when after is older than '
  'what prune removed.';

do $$
declare
  g text;
begin
  if not (select public from read_changes_public) then
    execute 'revoke execute on function replica.read_changes(bigint, integer, text[], text[]) from public';
  end if;
  for g in select grantee from read_changes_grants loop
    execute format('grant execute on function replica.read_changes(bigint, integer, text[], text[]) to %I', g);
  end loop;
end $$;

-- The newest position a statement may hand out or move a floor to: everything at or below it has committed
-- (or rolled back for good), because positions commit in order (0011).
create function sync.feed_head() returns bigint
language sql stable set search_path = pg_catalog, pg_temp as $$
  select greatest(coalesce((select max(c.position) from replica.changes c), 0),
                  (select s.pruned_through from replica.change_feed_state s))
$$;

create function replica.create_consumer(name text, resources text[] default null, merchant_ids text[] default null,
                                        after bigint default null)
returns boolean
language plpgsql volatile security definer set search_path = pg_catalog, pg_temp as $$
declare
  pruned bigint;
  head bigint;
  start bigint;
  existing sync.feed_consumers%rowtype;
  sorted_resources text[] := (select array_agg(distinct r order by r) from unnest(resources) r);
  sorted_merchants text[] := (select array_agg(distinct m order by m) from unnest(merchant_ids) m);
begin
  if name is null or name !~ '^[A-Za-z0-9][A-Za-z0-9_.:-]{0,62}$' then
    raise exception 'create_consumer: name must be 1-63 letters, digits, _ . : - (starting with a letter or digit), got %', coalesce(name, 'null')
      using errcode = '22023';
  end if;
  perform sync.check_consumer_filter(resources, merchant_ids);
  select s.pruned_through into pruned from replica.change_feed_state s;
  head := sync.feed_head();
  if after is null then
    start := head;
  elsif after = 0 then
    start := pruned;
  elsif after < 0 or after > head then
    raise exception 'create_consumer: after must be null (the head), 0 (the oldest kept change) or a position up to %, got %', head, after
      using errcode = '22023';
  elsif after < pruned then
    raise exception 'changes_expired: changes up to position % were pruned (RETENTION_DAYS); a consumer after % would miss some', pruned, after
      using errcode = 'LS410';
  else
    start := after;
  end if;
  insert into sync.feed_consumers as f (name, resources, merchant_ids, acked_through)
    values (create_consumer.name, sorted_resources, sorted_merchants, start)
    on conflict on constraint feed_consumers_pkey do nothing;
  if found then
    return true;
  end if;
  select * into existing from sync.feed_consumers f where f.name = create_consumer.name;
  if existing.resources is distinct from sorted_resources or existing.merchant_ids is distinct from sorted_merchants then
    raise exception 'consumer_exists: consumer % exists with another filter (resources %, merchant_ids %)', create_consumer.name,
      coalesce(existing.resources::text, 'all'), coalesce(existing.merchant_ids::text, 'all')
      using errcode = '42710', hint = 'Drop it first (replica.drop_consumer), or use another name.';
  end if;
  -- Same name, same filter: instances that each create it at start-up share the one consumer.
  return false;
end $$;

comment on function replica.create_consumer(text, text[], text[], bigint) is
  'Creates a named feed consumer with an optional filter, starting after position after (null: the head; 0: the '
  'oldest kept change). True when created; false when it already exists with the same filter.';

create function replica.drop_consumer(name text) returns boolean
language plpgsql volatile security definer set search_path = pg_catalog, pg_temp as $$
begin
  delete from sync.feed_consumers f where f.name = drop_consumer.name;
  return found;
end $$;

comment on function replica.drop_consumer(text) is
  'Drops a feed consumer and its leases. True when it existed.';

-- The consumer row, locked against other receives of the same consumer (acks do not take it), or an error.
create function sync.lock_consumer(consumer text) returns sync.feed_consumers
language plpgsql volatile set search_path = pg_catalog, pg_temp as $$
declare
  c sync.feed_consumers%rowtype;
begin
  select * into c from sync.feed_consumers f where f.name = lock_consumer.consumer for no key update;
  if not found then
    raise exception 'consumer_not_found: no feed consumer named %', coalesce(consumer, 'null')
      using errcode = '42704', hint = 'Create it with replica.create_consumer or loops-sync consumers add.';
  end if;
  return c;
end $$;

create function replica.receive_changes(consumer text, max_rows integer default 100,
                                        visibility_seconds integer default 30)
returns setof replica.changes
language plpgsql volatile security definer set search_path = pg_catalog, pg_temp as $$
declare
  c sync.feed_consumers%rowtype;
  pruned bigint;
  new_floor bigint;
  t timestamptz := clock_timestamp();
  picked bigint[];
  leased bigint[];
begin
  if max_rows is null or max_rows < 1 or max_rows > 10000 then
    raise exception 'receive_changes: max_rows must be between 1 and 10000, got %', max_rows using errcode = '22023';
  end if;
  if visibility_seconds is null or visibility_seconds < 1 or visibility_seconds > 43200 then
    raise exception 'receive_changes: visibility_seconds must be between 1 and 43200, got %', visibility_seconds
      using errcode = '22023';
  end if;
  -- Receives of one consumer take turns (a few milliseconds each); acks never wait for this lock.
  c := sync.lock_consumer(consumer);
  select s.pruned_through into pruned from replica.change_feed_state s;
  if c.acked_through < pruned then
    raise exception 'changes_expired: changes up to position % were pruned (RETENTION_DAYS) before consumer % acknowledged them (it is at %)', pruned, c.name, c.acked_through
      using errcode = 'LS410',
            hint = 'Resynchronise from the replica tables, then loops-sync consumers reset ' || c.name || ' --to ' || pruned || '.';
  end if;

  -- The floor moves over the acknowledged prefix: to just below the first matching change not acknowledged
  -- (by a committed ack), else to the head, both from one snapshot.
  select greatest(c.acked_through, coalesce(
           (select ch.position - 1 from replica.changes ch
            where ch.position > c.acked_through
              and (c.resources is null or ch.resource = any(c.resources))
              and (c.merchant_ids is null or ch.merchant_id = any(c.merchant_ids))
              and not exists (select 1 from sync.feed_consumer_leases l
                              where l.consumer_name = c.name and l.position = ch.position and l.acked_at is not null)
            order by ch.position limit 1),
           sync.feed_head()))
    into new_floor;
  if new_floor > c.acked_through then
    update sync.feed_consumers f set acked_through = new_floor where f.name = c.name;
    delete from sync.feed_consumer_leases l
      where l.consumer_name = c.name and l.position <= new_floor and l.acked_at is not null;
  end if;

  -- The next unacknowledged changes; of each resource only the first, and only when no one holds its lease.
  -- Everything of that resource at or below the floor is acknowledged, so "first in the window" is "first".
  with win as (
    select ch.position, ch.resource, ch.resource_id, l.leased_until
    from replica.changes ch
    left join sync.feed_consumer_leases l on l.consumer_name = c.name and l.position = ch.position
    where ch.position > new_floor
      and (c.resources is null or ch.resource = any(c.resources))
      and (c.merchant_ids is null or ch.merchant_id = any(c.merchant_ids))
      and l.acked_at is null
    order by ch.position
    limit greatest(max_rows * 10, 1000)
  ), heads as (
    select distinct on (w.resource, w.resource_id) w.position, w.leased_until
    from win w order by w.resource, w.resource_id, w.position
  )
  select array_agg(h.position order by h.position) into picked
  from (select h.position from heads h where h.leased_until is null or h.leased_until <= t
        order by h.position limit max_rows) h;
  if picked is null then
    update sync.feed_consumers f set last_receive_at = t where f.name = c.name;
    return;
  end if;

  -- Lease them. An expired lease whose late ack is in flight is locked by that ack: skipped, not waited for.
  with relet as (
    update sync.feed_consumer_leases l
    set leased_until = t + make_interval(secs => visibility_seconds), deliveries = l.deliveries + 1
    where l.consumer_name = c.name and l.position in (
      select x.position from sync.feed_consumer_leases x
      where x.consumer_name = c.name and x.position = any(picked) and x.acked_at is null and x.leased_until <= t
      for update skip locked)
    returning l.position
  ), fresh as (
    insert into sync.feed_consumer_leases (consumer_name, position, leased_until)
    select c.name, p, t + make_interval(secs => visibility_seconds) from unnest(picked) p
    where not exists (select 1 from sync.feed_consumer_leases x where x.consumer_name = c.name and x.position = p)
    on conflict do nothing
    returning position
  )
  select array_agg(position) into leased from (select position from relet union all select position from fresh) s;
  update sync.feed_consumers f set last_receive_at = t where f.name = c.name;
  return query select ch.* from replica.changes ch where ch.position = any(leased) order by ch.position;
end $$;

comment on function replica.receive_changes(text, integer, integer) is
  'Up to max_rows changes for the consumer, in position order, leased for visibility_seconds: matching its '
  'filter, neither acknowledged nor leased, and with no earlier change of the same resource still '
  'unacknowledged. Concurrent callers get different changes. Raises consumer_not_found (42704) and '
  'changes_expired (LS410).';

create function replica.ack_changes(consumer text, positions bigint[]) returns integer
language plpgsql volatile security definer set search_path = pg_catalog, pg_temp as $$
declare
  n integer;
begin
  perform 1 from sync.feed_consumers f where f.name = ack_changes.consumer;
  if not found then
    raise exception 'consumer_not_found: no feed consumer named %', coalesce(consumer, 'null')
      using errcode = '42704', hint = 'Create it with replica.create_consumer or loops-sync consumers add.';
  end if;
  -- Only a change handed out and not yet acknowledged counts. Two instances acknowledging the same change (one
  -- whose lease expired): the second waits for the first's transaction, then finds it acknowledged and counts
  -- nothing, so its caller can roll its own writes back.
  update sync.feed_consumer_leases l set acked_at = clock_timestamp(), leased_until = null
    where l.consumer_name = ack_changes.consumer and l.position = any(positions) and l.acked_at is null;
  get diagnostics n = row_count;
  if n > 0 then
    perform pg_notify('loops_sync_consumers', ack_changes.consumer);
  end if;
  return n;
end $$;

comment on function replica.ack_changes(text, bigint[]) is
  'Acknowledges handed-out changes of the consumer for good; returns how many were acknowledged now (a change '
  'already acknowledged, or never handed out, does not count). In the caller''s transaction: exactly-once '
  'handling for writes in the same database.';

revoke execute on function replica.create_consumer(text, text[], text[], bigint) from public;
revoke execute on function replica.drop_consumer(text) from public;
revoke execute on function replica.receive_changes(text, integer, integer) from public;
revoke execute on function replica.ack_changes(text, bigint[]) from public;
revoke execute on function sync.lock_consumer(text) from public;

-- For operators (loops-sync consumers reset): moves the floor to `after` and forgets every lease, so the
-- consumer hands out again everything after it. Not for consumer roles.
create function sync.reset_consumer(consumer text, after bigint) returns void
language plpgsql volatile set search_path = pg_catalog, pg_temp as $$
declare
  c sync.feed_consumers%rowtype;
  pruned bigint;
  head bigint;
begin
  c := sync.lock_consumer(consumer);
  select s.pruned_through into pruned from replica.change_feed_state s;
  head := sync.feed_head();
  if after is null or after < pruned or after > head then
    raise exception 'reset_consumer: the position must be between % (what prune kept) and % (the head), got %', pruned, head, coalesce(after::text, 'null')
      using errcode = '22023';
  end if;
  delete from sync.feed_consumer_leases l where l.consumer_name = c.name;
  update sync.feed_consumers f set acked_through = after where f.name = c.name;
end $$;

-- The position just before the first change written at or after `since`: where a consumer re-reads from.
create function sync.position_before(since timestamptz) returns bigint
language sql stable set search_path = pg_catalog, pg_temp as $$
  select greatest(coalesce((select max(c.position) from replica.changes c where c.changed_at < since), 0),
                  (select s.pruned_through from replica.change_feed_state s))
$$;

-- Per consumer: what it has not acknowledged (changes matching its filter above its floor, up to the head),
-- what is leased now, and how old its oldest unacknowledged change is (0 when none).
create function sync.consumer_lag()
returns table (name text, resources text[], merchant_ids text[], acked_through bigint, pending bigint,
               leased bigint, oldest_pending_at timestamptz, lag_seconds double precision, created_at timestamptz,
               last_receive_at timestamptz)
language sql stable set search_path = pg_catalog, pg_temp as $$
  select f.name, f.resources, f.merchant_ids, f.acked_through, p.pending,
         (select count(*) from sync.feed_consumer_leases l
          where l.consumer_name = f.name and l.acked_at is null and l.leased_until > clock_timestamp()),
         p.oldest,
         coalesce(extract(epoch from clock_timestamp() - p.oldest)::double precision, 0),
         f.created_at, f.last_receive_at
  from sync.feed_consumers f
  cross join lateral (
    select count(*) as pending, min(ch.changed_at) as oldest
    from replica.changes ch
    where ch.position > f.acked_through
      and (f.resources is null or ch.resource = any(f.resources))
      and (f.merchant_ids is null or ch.merchant_id = any(f.merchant_ids))
      and not exists (select 1 from sync.feed_consumer_leases l
                      where l.consumer_name = f.name and l.position = ch.position and l.acked_at is not null)
  ) p
  order by f.name
$$;

-- For prune: the lowest position a consumer still needs (just above its floor), or null when there is no
-- consumer. Prune keeps it and everything above it while younger than RETENTION_DAYS.
create function sync.consumers_needed_from() returns bigint
language sql stable set search_path = pg_catalog, pg_temp as $$
  select min(f.acked_through) + 1 from sync.feed_consumers f
$$;
