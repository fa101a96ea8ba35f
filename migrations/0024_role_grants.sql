-- Roles that `loops-sync grant` gave read or consume rights in THIS database (docs/decisions.md, "Reader and
-- consumer rights are recorded per database, not given through group roles"). migrate calls
-- sync.apply_role_rights for each of them at the end of its transaction, so a table or view a later migration
-- adds to replica or reporting is readable by them without a new grant, and a migration that cannot be granted
-- rolls back whole.
create table sync.role_grants (
  -- By oid: a renamed role keeps its rights; a dropped one's row is removed by the next migrate.
  role_oid   oid primary key,
  -- The name when granted, for messages.
  role_name  text not null,
  rights     text not null check (rights in ('reader', 'consumer')),
  granted_at timestamptz not null default now()
);

-- Makes `grantee`'s rights exactly `rights` ('none', 'reader' or 'consumer') as far as loops-sync gives them:
--   reader   CONNECT on this database, USAGE on replica and reporting, SELECT on every table and view in them,
--            EXECUTE on replica.read_changes. Nothing in sync or graphile_worker, no write anywhere. The
--            reporting views read sync.* with their owner's rights, so sync_health works without sync access.
--   consumer the reader's rights plus EXECUTE on the feed consumer functions (security definer, execute
--            revoked from public): the only way a consumer changes its cursor and leases. Looked up by name
--            here, so a database that does not have them yet simply grants none.
-- Runs as the owner of the mirror's schemas (only an owner may grant on its objects); anyone else is refused,
-- because a GRANT by a non-owner is only a warning and would leave the role half-granted.
create function sync.apply_role_rights(grantee oid, rights text) returns void
language plpgsql as $$
declare
  who text := (select quote_ident(r.rolname) from pg_roles r where r.oid = grantee);
  owner_oid oid := (select n.nspowner from pg_namespace n where n.nspname = 'replica');
  fn regprocedure;
  missing text;
begin
  if who is null then
    raise exception 'apply_role_rights: no role has oid %', grantee using errcode = '42704';
  end if;
  if rights is null or rights not in ('none', 'reader', 'consumer') then
    raise exception 'apply_role_rights: rights must be none, reader or consumer, got %', rights
      using errcode = '22023';
  end if;
  if not pg_has_role(current_user, owner_oid, 'USAGE') then
    raise exception 'grant must run as the owner of the replica schema (%), not as %', owner_oid::regrole, current_user
      using errcode = '42501',
            hint = 'Use the DATABASE_URL that runs loops-sync migrate.';
  end if;

  -- Only an owner may grant on a relation: name the first one we do not own before trying.
  select format('%I.%I (owned by %s)', n.nspname, c.relname, c.relowner::regrole) into missing
    from pg_class c join pg_namespace n on n.oid = c.relnamespace
   where n.nspname in ('replica', 'reporting') and c.relkind in ('r', 'v', 'm', 'p', 'f')
     and not pg_has_role(current_user, c.relowner, 'USAGE')
   limit 1;
  if missing is not null then
    raise exception 'cannot grant % rights on %: % does not own it', who, missing, current_user
      using errcode = '42501',
            hint = 'alter its owner to the role that runs loops-sync migrate, or drop it';
  end if;

  if rights = 'none' then
    execute format('revoke select on all tables in schema replica, reporting from %s', who);
    execute format('revoke usage on schema replica, reporting from %s', who);
    execute format('revoke connect on database %I from %s', current_database(), who);
  else
    execute format('grant connect on database %I to %s', current_database(), who);
    execute format('grant usage on schema replica, reporting to %s', who);
    execute format('grant select on all tables in schema replica, reporting to %s', who);
  end if;

  for fn in
    select p.oid::regprocedure from pg_proc p
     where p.pronamespace = 'replica'::regnamespace and p.proname = 'read_changes'
  loop
    execute format(case when rights = 'none' then 'revoke execute on function %s from %s'
                        else 'grant execute on function %s to %s' end, fn, who);
  end loop;

  for fn in
    select p.oid::regprocedure from pg_proc p
     where p.pronamespace = 'replica'::regnamespace
       and p.proname in ('create_consumer', 'drop_consumer', 'receive_changes', 'ack_changes')
  loop
    execute format(case when rights = 'consumer' then 'grant execute on function %s to %s'
                        else 'revoke execute on function %s from %s' end, fn, who);
  end loop;

  -- A GRANT that could give less than asked is only a warning: check the result.
  if rights <> 'none' then
    select format('%I.%I (owned by %s)', n.nspname, c.relname, c.relowner::regrole) into missing
      from pg_class c join pg_namespace n on n.oid = c.relnamespace
     where n.nspname in ('replica', 'reporting') and c.relkind in ('r', 'v', 'm', 'p', 'f')
       and not has_table_privilege(grantee, c.oid, 'SELECT')
     limit 1;
    if missing is not null then
      raise exception 'cannot give % select on %', who, missing using errcode = '42501';
    end if;
  end if;
end $$;

-- Only migrate and `loops-sync grant` (the owner) call it.
revoke execute on function sync.apply_role_rights(oid, text) from public;
