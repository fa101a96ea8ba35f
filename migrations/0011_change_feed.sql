-- The change feed: one row per committed change of a mirrored row, written in the transaction of the change,
-- read by the partner's backend with replica.read_changes(after, max_rows) (docs/reporting.md, "The change feed").
--
-- Why a reader that resumes after its last position never misses one (docs/decisions.md, "The change feed is
-- gap-free by commit order"): every insert into this table first takes ONE transaction-scoped advisory lock
-- (the statement trigger below), and the writers insert their changes as the last statement before COMMIT. So
-- positions are handed out, and their transactions commit, one transaction at a time: a transaction holding
-- position p has committed (and is visible) before any transaction can take a position above p, and a
-- rolled-back one leaves a hole no one will ever fill. A plain `position > cursor` read is then safe. Without
-- the lock it is not: a transaction may take 10, commit after another took and committed 11, and a reader that
-- already moved past 11 never sees 10.
create table replica.changes (
  -- Cache 1 (the default): every nextval is taken under the lock, so positions grow in commit order.
  position         bigint generated always as identity primary key,
  resource         text not null check (resource in (
                     'order', 'location', 'channel_connection', 'brand', 'menu', 'merchant', 'connection', 'job',
                     'channel')),
  resource_id      text not null,
  -- Null only for resources that belong to no merchant (the channel catalog).
  merchant_id      text,
  operation        text not null check (operation in ('insert', 'update', 'delete')),
  version          bigint,
  previous_version bigint,
  status           text,
  previous_status  text,
  -- How the change came: webhook, catchup, backfill, repair, reconcile, cli.
  source           text not null,
  -- The upstream event that led to it, when one did.
  event_id         text,
  changed_at       timestamptz not null default clock_timestamp()
);
-- One resource's history in order (forwarding delivers per resource in position order).
create index changes_resource_idx on replica.changes (resource, resource_id, position);

-- What prune removed: a reader whose cursor is below this may have missed changes.
create table replica.change_feed_state (
  singleton      boolean primary key default true check (singleton),
  pruned_through bigint not null default 0
);
insert into replica.change_feed_state default values;

create function replica.take_change_feed_lock() returns trigger
language plpgsql as $$
begin
  -- Held until this transaction ends; the constant is this lock's own (the migrator's is 7240315981).
  perform pg_advisory_xact_lock(7240315982);
  return null;
end $$;

create trigger changes_in_commit_order
  before insert on replica.changes
  for each statement execute function replica.take_change_feed_lock();

create function replica.notify_changes() returns trigger
language plpgsql as $$
begin
  -- Delivered at commit, never for a rollback. The payload is the highest position this statement added.
  perform pg_notify('loops_sync_changes', (select max(position)::text from added));
  return null;
end $$;

create trigger changes_notify
  after insert on replica.changes
  referencing new table as added
  for each statement execute function replica.notify_changes();

-- Changes are facts: only prune deletes them, and nothing rewrites one.
create function replica.refuse_change_update() returns trigger
language plpgsql as $$
begin
  raise exception 'replica.changes rows are never updated' using errcode = '55000';
end $$;

create trigger changes_are_immutable
  before update on replica.changes
  for each statement execute function replica.refuse_change_update();

create function replica.read_changes(after bigint, max_rows integer default 1000)
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
  select s.pruned_through into pruned from replica.change_feed_state s;
  if after < pruned then
    raise exception 'changes_expired: changes up to position % were pruned (RETENTION_DAYS); a reader at % may have missed some', pruned, after
      using errcode = 'LS410',
            hint = 'Resynchronise from the replica tables, then read on after position ' || pruned || '.';
  end if;
  return query
    select * from replica.changes c where c.position > after order by c.position limit max_rows;
end $$;

comment on function replica.read_changes(bigint, integer) is
  'Changes with position > after, in position order, at most max_rows. A reader that always continues after the '
  'last position it processed sees every committed change exactly once, in order. Raises changes_expired '
  '(SQLSTATE LS410) when after is older than what prune removed.';
