-- Feed consumers get one home (issue 54): migration 0022 wrote the consumer filter's predicate four times, the
-- resource list three times and the consumer-name pattern twice (and the CLI and @loops-sync/schema twice more).
-- Here each is written once and the functions of 0022 use them, replaced in place with the same signatures,
-- grants and behaviour, so the 0.1.0 release keeps calling them while and after this runs (expand only).
--
-- change_matches and the resource list live in replica, executable by PUBLIC like any pure function: read_changes
-- runs with its caller's rights, and a reader role has nothing in sync. change_matches is a SQL-standard body of
-- one expression, immutable, without SET: Postgres inlines it, so a scan filters exactly as the written-out
-- predicate did (test/feed/feed-consumer-home.test.ts checks the plan).
--
-- The TypeScript side: CHANGE_RESOURCES and CONSUMER_NAME_PATTERN (@loops-sync/schema/change-feed) must equal
-- replica.change_resources() and sync.consumer_name_pattern(); the same test holds them to it. The writes of
-- operators (create, drop, reset) are packages/db/src/feed-consumers/'s.

-- step: replica.change_resources(): the resources the feed names, once
create or replace function replica.change_resources() returns text[]
language sql immutable parallel safe
return array['order', 'location', 'channel_connection', 'brand', 'menu', 'merchant', 'connection', 'job',
             'channel']::text[];

-- step: replica.change_resources_listed(): the same list for messages ("a, b or c")
create or replace function replica.change_resources_listed(last_separator text) returns text
language sql immutable parallel safe
return array_to_string(trim_array(replica.change_resources(), 1), ', ') || last_separator
       || (replica.change_resources())[cardinality(replica.change_resources())];

-- step: replica.change_matches(): the consumer filter's predicate, once (null: every resource, every merchant)
create or replace function replica.change_matches(resource text, merchant_id text, resources text[],
                                                  merchant_ids text[]) returns boolean
language sql immutable parallel safe
return (resources is null or resource = any(resources)) and (merchant_ids is null or merchant_id = any(merchant_ids));

-- step: sync.consumer_name_pattern(): a consumer's name, once (sync.feed_consumers' check of 0022 says the same)
create or replace function sync.consumer_name_pattern() returns text
language sql immutable parallel safe
return '^[A-Za-z0-9][A-Za-z0-9_.:-]{0,62}$';

-- step: sync.check_consumer_filter checks against replica.change_resources()
create or replace function sync.check_consumer_filter(resources text[], merchant_ids text[]) returns void
language plpgsql immutable set search_path = pg_catalog, pg_temp as $$
declare
  bad text;
begin
  if resources is not null then
    if cardinality(resources) = 0 then
      raise exception 'resources must be null (every resource) or name at least one' using errcode = '22023';
    end if;
    select r into bad from unnest(resources) r
      where r is null or not r = any(replica.change_resources())
      limit 1;
    if found then
      raise exception 'unknown resource %: expected %', coalesce(bad, 'null'), replica.change_resources_listed(' or ')
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

-- step: replica.read_changes filters with replica.change_matches
create or replace function replica.read_changes(after bigint, max_rows integer default 1000, resources text[] default null,
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
  if resources is not null and (cardinality(resources) = 0 or not resources <@ replica.change_resources()) then
    raise exception 'read_changes: resources must be null (every resource) or some of %, got %', replica.change_resources_listed(', '), resources
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
      and replica.change_matches(c.resource, c.merchant_id, read_changes.resources, read_changes.merchant_ids)
    order by c.position limit max_rows;
end $$;

-- step: replica.create_consumer checks names with sync.consumer_name_pattern()
create or replace function replica.create_consumer(name text, resources text[] default null, merchant_ids text[] default null,
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
  if name is null or name !~ sync.consumer_name_pattern() then
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

-- step: replica.receive_changes filters with replica.change_matches
create or replace function replica.receive_changes(consumer text, max_rows integer default 100,
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
              and replica.change_matches(ch.resource, ch.merchant_id, c.resources, c.merchant_ids)
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
      and replica.change_matches(ch.resource, ch.merchant_id, c.resources, c.merchant_ids)
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

-- step: sync.consumer_lag filters with replica.change_matches
create or replace function sync.consumer_lag()
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
      and replica.change_matches(ch.resource, ch.merchant_id, f.resources, f.merchant_ids)
      and not exists (select 1 from sync.feed_consumer_leases l
                      where l.consumer_name = f.name and l.position = ch.position and l.acked_at is not null)
  ) p
  order by f.name
$$;
