// Three instances of one backend share a feed consumer while writers commit: one instance dies holding a lease.
// Checked: nothing missed, nothing handled twice, and nothing handed out before its predecessor's ack. The same
// run against a naive receive (leases without the per-resource wait) must be caught.
import { connect, type Sql } from "@loops-sync/db";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "../support/db.ts";
import { orderChange, writeChanges } from "../support/write-changes.ts";

interface Received {
  position: string;
  resource_id: string;
  version: string;
  previous_version: string | null;
}

interface Outcome {
  written: number;
  /** Changes handled (committed with their ack) more than once. */
  handledTwice: number;
  /** Changes written after the consumer started and never handled. */
  missed: number;
  /** Changes handed out while the previous version of the same order was not yet handled and acknowledged. */
  early: string[];
  /** Orders whose versions were handled out of order. */
  outOfOrder: number;
  /** Whether the dying instance had leases when it died. */
  diedHolding: number;
}

/** A naive receive: skip-locked leases of the next unacknowledged changes, blind to per-resource order. */
const NAIVE_RECEIVE = `
create function public.naive_receive(consumer text, max_rows integer, visibility_seconds integer)
returns setof replica.changes language plpgsql as $$
declare
  c sync.feed_consumers%rowtype;
  picked bigint[];
  t timestamptz := clock_timestamp();
begin
  c := sync.lock_consumer(consumer);
  select array_agg(s.position) into picked from (
    select ch.position from replica.changes ch
    left join sync.feed_consumer_leases l on l.consumer_name = c.name and l.position = ch.position
    where ch.position > c.acked_through and l.acked_at is null and (l.leased_until is null or l.leased_until <= t)
    order by ch.position limit max_rows) s;
  insert into sync.feed_consumer_leases (consumer_name, position, leased_until)
    select c.name, p, t + make_interval(secs => visibility_seconds) from unnest(picked) p
    on conflict (consumer_name, position) do update set leased_until = excluded.leased_until;
  return query select ch.* from replica.changes ch where ch.position = any(picked) order by ch.position;
end $$`;

/**
 * Writers commit versions 1..VERSIONS of ORDERS orders (some two versions in one commit, so a batch can hold a
 * resource's change and its successor) while instances A and B receive, handle (a row in `handled`, in the
 * same transaction as the ack) and acknowledge; instance C receives a batch, starts handling it and is
 * terminated before it commits.
 */
async function run(db: TestDatabase, consumer: string, receiveFn: string): Promise<Outcome> {
  const { sql } = db;
  await sql`create table if not exists public.handled (
    seq bigint generated always as identity, consumer text, position bigint, order_id text, version int, by text)`;
  await sql`select replica.create_consumer(${consumer})`;
  const [start] = await sql<
    { p: string }[]
  >`select coalesce(max(position), 0)::text as p from replica.changes`;
  const WRITERS = 3;
  const ORDERS = 8;
  const VERSIONS = 6;
  let writing = WRITERS;
  const early: string[] = [];

  const writer = async (w: number) => {
    const pool = connect(db.url, { max: 1 });
    try {
      for (let v = 1; v <= VERSIONS; v += v % 2 === 1 ? 2 : 1) {
        for (let o = 0; o < ORDERS; o++) {
          const id = `ord_${consumer}_${w}_${o}`;
          const both = v + 1 <= VERSIONS && (o + v) % 3 === 0;
          await writeChanges(pool, [
            orderChange(id, v, `s${v}`, v === 1 ? null : `s${v - 1}`),
            ...(both ? [orderChange(id, v + 1, `s${v + 1}`, `s${v}`)] : []),
          ]);
          if (!both && v + 1 <= VERSIONS && v % 2 === 1) {
            await writeChanges(pool, [orderChange(id, v + 1, `s${v + 1}`, `s${v}`)]);
          }
        }
      }
    } finally {
      writing--;
      await pool.end();
    }
  };

  const receive = async (pool: Sql, visibility: number): Promise<Received[]> => {
    const rows = await pool.unsafe<Received[]>(
      `select position::text, resource_id, version::text, previous_version::text from ${receiveFn}($1, 10, $2)`,
      [consumer, visibility],
    );
    // At the moment of handing out, the previous version must be handled and acknowledged (one commit).
    for (const r of rows) {
      if (r.previous_version === null) continue;
      const [done] = await pool<{ n: number }[]>`
        select count(*)::int as n from public.handled
        where consumer = ${consumer} and order_id = ${r.resource_id} and version = ${Number(r.previous_version)}`;
      if (done!.n === 0) early.push(`${r.resource_id}@${r.version}`);
    }
    return rows;
  };

  const instance = async (name: string) => {
    const pool = connect(db.url, { max: 2 });
    try {
      for (;;) {
        const batch = await receive(pool, 5);
        if (batch.length === 0) {
          if (writing === 0) {
            const [left] = await pool<{ n: number }[]>`
              select count(*)::int as n from replica.changes c
              where c.position > ${start!.p}::bigint and c.resource_id like ${`ord_${consumer}_%`}
                and not exists (select 1 from public.handled h where h.consumer = ${consumer} and h.position = c.position)`;
            if (left!.n === 0) return;
          }
          await new Promise((r) => setTimeout(r, 20));
          continue;
        }
        await pool
          .begin(async (tx) => {
            for (const c of batch) {
              await tx`insert into public.handled (consumer, position, order_id, version, by)
                values (${consumer}, ${c.position}::bigint, ${c.resource_id}, ${Number(c.version)}, ${name})`;
            }
            const [acked] = await tx<{ n: number }[]>`
              select replica.ack_changes(${consumer}, ${batch.map((c) => c.position)}::bigint[]) as n`;
            // Someone else acknowledged one first (our lease had expired): our handling must not count.
            if (acked!.n !== batch.length) throw new Error("lost a lease");
          })
          .catch((error: Error) => {
            if (error.message !== "lost a lease") throw error;
          });
      }
    } finally {
      await pool.end();
    }
  };

  // C: receives as soon as there is something, starts handling, and dies before its commit.
  const dying = async (): Promise<number> => {
    const pool = connect(db.url, { max: 1 });
    const admin = connect(db.url, { max: 1 });
    try {
      let batch: Received[] = [];
      while (batch.length === 0) {
        batch = await receive(pool, 2);
        if (batch.length === 0) await new Promise((r) => setTimeout(r, 5));
      }
      await pool
        .begin(async (tx) => {
          const [me] = await tx<{ pid: number }[]>`select pg_backend_pid() as pid`;
          for (const c of batch) {
            await tx`insert into public.handled (consumer, position, order_id, version, by)
              values (${consumer}, ${c.position}::bigint, ${c.resource_id}, ${Number(c.version)}, 'C')`;
          }
          await admin`select pg_terminate_backend(${me!.pid})`;
          await tx`select replica.ack_changes(${consumer}, ${batch.map((c) => c.position)}::bigint[])`;
        })
        .catch(() => {});
      return batch.length;
    } finally {
      await pool.end({ timeout: 1 });
      await admin.end();
    }
  };

  const diedHolding = dying();
  const writers = Array.from({ length: WRITERS }, (_, w) => writer(w));
  await diedHolding;
  await Promise.all([...writers, instance("A"), instance("B")]);

  const [counts] = await sql<{ written: number; twice: number; missed: number }[]>`
    select (select count(*)::int from replica.changes c
            where c.position > ${start!.p}::bigint and c.resource_id like ${`ord_${consumer}_%`}) as written,
           (select count(*)::int from (select position from public.handled where consumer = ${consumer}
                                       group by position having count(*) > 1) d) as twice,
           (select count(*)::int from replica.changes c
            where c.position > ${start!.p}::bigint and c.resource_id like ${`ord_${consumer}_%`}
              and not exists (select 1 from public.handled h where h.consumer = ${consumer} and h.position = c.position)) as missed`;
  const [order] = await sql<{ n: number }[]>`
    select count(*)::int as n from (
      select order_id, version < lag(version) over (partition by order_id order by seq) as back
      from public.handled where consumer = ${consumer}) x where back`;
  return {
    written: counts!.written,
    handledTwice: counts!.twice,
    missed: counts!.missed,
    early,
    outOfOrder: order!.n,
    diedHolding: await diedHolding,
  };
}

describe("three instances of one consumer while workers write", () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase();
    await db.sql.unsafe(NAIVE_RECEIVE);
  });
  afterAll(async () => {
    await db?.drop();
  });

  it("miss nothing, handle nothing twice, and get nothing before its predecessor's ack", async () => {
    const outcome = await run(db, "backend", "replica.receive_changes");
    expect(outcome.diedHolding).toBeGreaterThan(0);
    expect(outcome.written).toBe(3 * 8 * 6);
    expect(outcome).toMatchObject({ handledTwice: 0, missed: 0, early: [], outOfOrder: 0 });
  }, 180_000);

  it("catch a naive receive that leases without waiting for a resource's earlier change", async () => {
    const outcome = await run(db, "naive", "public.naive_receive");
    expect(outcome.written).toBe(3 * 8 * 6);
    expect(outcome.early.length).toBeGreaterThan(0);
  }, 180_000);
});
