-- On a streaming standby (DESIGN.md, "Readers on a streaming standby") the feed consumer functions write, so
-- they cannot run there; without this a caller gets Postgres' own words ("cannot execute SELECT FOR NO KEY
-- UPDATE in a read-only transaction") that name neither the function nor where to run it. Each now starts with
-- one check that raises one line naming the primary, with the same SQLSTATE Postgres uses (25006,
-- read_only_sql_transaction), so callers that switch on the code see no change.
--
-- The check is put at the start of each function's current body, read from the catalog, rather than a copy of
-- 0022's text: a copy would undo whatever an earlier migration of this release changed in those bodies
-- (docs/decisions.md, "Standby: refuse writes up front, follow the replay"). On the primary the functions
-- behave as before, signatures, owners, grants and comments unchanged; the 0.1.0 processes keep calling them.

-- step: sync.refuse_on_standby raises one line naming the primary when the database is a standby
create or replace function sync.refuse_on_standby(what text) returns void
language plpgsql stable set search_path = pg_catalog, pg_temp as $$
begin
  if pg_is_in_recovery() then
    raise exception '% writes, and this database is a read-only standby: run it on the primary', what
      using errcode = '25006',
            hint = 'Point this caller at the primary; a standby serves read_changes and the reporting views.';
  end if;
end $$;

comment on function sync.refuse_on_standby(text) is
  'Raises read_only_sql_transaction (25006) naming the primary when this database is a standby (in recovery).';

-- step: the feed consumer functions refuse on a standby before anything else
do $$
declare
  f regprocedure;
  def text;
  patched text;
begin
  foreach f in array array['replica.create_consumer(text, text[], text[], bigint)',
                           'replica.drop_consumer(text)',
                           'replica.receive_changes(text, integer, integer)',
                           'replica.ack_changes(text, bigint[])']::regprocedure[] loop
    def := pg_get_functiondef(f);
    -- Run again (a retried step, a later migrate): already patched.
    continue when position('sync.refuse_on_standby(' in def) > 0;
    if (select l.lanname from pg_proc p join pg_language l on l.oid = p.prolang where p.oid = f) <> 'plpgsql' then
      raise exception 'refuse_on_standby: % is no longer plpgsql; put the check in its body by hand', f;
    end if;
    -- The first BEGIN of the body: its declarations hold none.
    patched := regexp_replace(def, '(AS \$function\$.*?\mbegin\M)',
                              format(E'\\1\n  perform sync.refuse_on_standby(%L);', f::oid::regproc::text), 'i');
    if patched = def then
      raise exception 'refuse_on_standby: no BEGIN found in the body of %', f;
    end if;
    execute patched;
  end loop;
end $$;
