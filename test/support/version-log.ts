// Records every version the replica ever held, by a trigger the test installs in its own database, so
// "no version went backwards" and "no version applied twice" are checked on the whole history, not just
// on the final rows.

import type { Sql } from "@loops-sync/db";

export interface VersionLogProblems {
  /**
   * Writes of a version not newer than the one stored before (an update that went backwards or sideways). A
   * confirmation (the same version, applied from an event's payload, now fetched: migration 0019) is neither.
   */
  backwards: { orderId: string; from: number; to: number }[];
  /** The same (order, version) written more than once: an event applied twice. */
  twice: { orderId: string; version: number; times: number }[];
  /** Rows in the log: every write of replica.orders. */
  writes: number;
}

/** Creates `chaos.version_log` and a trigger on replica.orders writing one row per insert or update. */
export async function installVersionLog(sql: Sql): Promise<void> {
  await sql.unsafe(`
    create schema if not exists chaos;
    create table if not exists chaos.version_log (
      seq         bigserial primary key,
      order_id    text not null,
      old_version bigint,
      new_version bigint not null,
      -- A fetch confirming a version applied from an event's payload: the same version, now fetched.
      confirm     boolean not null default false,
      at          timestamptz not null default clock_timestamp()
    );
    create or replace function chaos.log_version() returns trigger language plpgsql as $$
    begin
      insert into chaos.version_log (order_id, old_version, new_version, confirm)
      values (new.id, case when tg_op = 'UPDATE' then old.version end, new.version,
              tg_op = 'UPDATE' and new.version = old.version and old.fetched_version < old.version
                and new.fetched_version = new.version);
      return new;
    end $$;
    drop trigger if exists chaos_version_log on replica.orders;
    create trigger chaos_version_log after insert or update on replica.orders
      for each row execute function chaos.log_version();
  `);
}

/** Reads the log back and lists every backwards or repeated write. */
export async function checkVersionLog(sql: Sql): Promise<VersionLogProblems> {
  const backwards = await sql<{ order_id: string; old_version: string; new_version: string }[]>`
    select order_id, old_version, new_version from chaos.version_log
    where old_version is not null and new_version <= old_version and not confirm`;
  // Within an order, the log read in commit order (seq) must strictly increase too.
  const outOfOrder = await sql<{ order_id: string; prev: string; new_version: string }[]>`
    select order_id, prev, new_version from (
      select order_id, new_version, lag(new_version) over (partition by order_id order by seq) as prev
      from chaos.version_log where not confirm) t
    where prev is not null and new_version <= prev`;
  const twice = await sql<{ order_id: string; new_version: string; times: string }[]>`
    select order_id, new_version, count(*) as times from chaos.version_log where not confirm
    group by order_id, new_version having count(*) > 1`;
  const [{ writes } = { writes: "0" }] = await sql<{ writes: string }[]>`
    select count(*) as writes from chaos.version_log`;
  const seen = new Set<string>();
  const all = [
    ...backwards.map((r) => ({
      orderId: r.order_id,
      from: Number(r.old_version),
      to: Number(r.new_version),
    })),
    ...outOfOrder.map((r) => ({ orderId: r.order_id, from: Number(r.prev), to: Number(r.new_version) })),
  ].filter((p) => {
    const key = `${p.orderId}:${p.from}:${p.to}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
  return {
    backwards: all,
    twice: twice.map((r) => ({
      orderId: r.order_id,
      version: Number(r.new_version),
      times: Number(r.times),
    })),
    writes: Number(writes),
  };
}
