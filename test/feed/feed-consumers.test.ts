// The feed consumer functions of migration 0022 over a real database: leases, per-resource order, acks,
// visibility timeouts, filters, and who may call them.
import { randomBytes } from "node:crypto";
import type { Sql, TransactionSql } from "@loops-sync/db";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "../support/db.ts";
import { orderChange, writeChanges } from "../support/write-changes.ts";

const positions = (rows: readonly { position: unknown }[]) => rows.map((r) => Number(r.position));
const ids = (rows: readonly { resource_id: unknown; version: unknown }[]) =>
  rows.map((r) => `${r.resource_id}@${r.version}`);

async function receive(sql: Sql | TransactionSql, consumer: string, maxRows = 100, visibility = 3600) {
  return sql<{ position: string; resource_id: string; version: string }[]>`
    select * from replica.receive_changes(${consumer}, ${maxRows}, ${visibility})`;
}
async function ack(sql: Sql | TransactionSql, consumer: string, ps: readonly number[]): Promise<number> {
  const [row] = await sql<
    { n: number }[]
  >`select replica.ack_changes(${consumer}, ${ps as number[]}::bigint[]) as n`;
  return row!.n;
}
async function sqlstate(p: Promise<unknown>): Promise<string> {
  try {
    await p;
  } catch (error) {
    return (error as { code: string }).code;
  }
  throw new Error("expected an error");
}

describe("feed consumers", () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase();
    await writeChanges(db.sql, [orderChange("ord_old", 1, "placed", null)]);
  });
  afterAll(async () => {
    await db?.drop();
  });

  it("starts at the head by default, or from the oldest kept change with after 0", async () => {
    const { sql } = db;
    expect((await sql`select replica.create_consumer('at_head') as created`)[0]!.created).toBe(true);
    expect((await sql`select replica.create_consumer('from_start', after => 0) as c`)[0]!.c).toBe(true);
    await writeChanges(sql, [orderChange("ord_h1", 1, "placed", null)]);
    expect(ids(await receive(sql, "at_head"))).toEqual(["ord_h1@1"]);
    expect(ids(await receive(sql, "from_start"))).toEqual(["ord_old@1", "ord_h1@1"]);
    // The same name and filter again: shared, not an error; another filter is.
    expect((await sql`select replica.create_consumer('at_head') as c`)[0]!.c).toBe(false);
    expect(await sqlstate(sql`select replica.create_consumer('at_head', array['order'])`)).toBe("42710");
    expect(await sqlstate(sql`select replica.create_consumer('bad name')`)).toBe("22023");
    expect(await sqlstate(sql`select replica.create_consumer('x', array['orders'])`)).toBe("22023");
    expect(await sqlstate(sql`select replica.create_consumer('x', after => 999999)`)).toBe("22023");
    expect(await sqlstate(receive(sql, "nobody"))).toBe("42704");
    expect(await sqlstate(sql`select replica.ack_changes('nobody', array[1]::bigint[])`)).toBe("42704");
    expect(await sqlstate(receive(sql, "at_head", 0))).toBe("22023");
    expect(await sqlstate(receive(sql, "at_head", 10, 0))).toBe("22023");
    expect((await sql`select replica.drop_consumer('at_head') as d`)[0]!.d).toBe(true);
    expect((await sql`select replica.drop_consumer('at_head') as d`)[0]!.d).toBe(false);
    await sql`select replica.drop_consumer('from_start')`;
  });

  it("hands each change to one caller, and a resource's next change only after the earlier one's ack", async () => {
    const { sql } = db;
    await sql`select replica.create_consumer('order_c')`;
    await writeChanges(sql, [
      orderChange("ord_a", 1, "placed", null),
      orderChange("ord_b", 1, "placed", null),
      orderChange("ord_a", 2, "accepted", "placed"),
      orderChange("ord_c", 1, "placed", null),
    ]);
    const first = await receive(sql, "order_c", 2);
    expect(ids(first)).toEqual(["ord_a@1", "ord_b@1"]);
    // ord_a@2 waits behind the leased ord_a@1; ord_c@1 does not.
    const second = await receive(sql, "order_c", 10);
    expect(ids(second)).toEqual(["ord_c@1"]);
    expect(await receive(sql, "order_c", 10)).toEqual([]);
    // An ack that rolls back acknowledges nothing.
    let countedBeforeRollback: number | undefined;
    await expect(
      sql.begin(async (tx) => {
        countedBeforeRollback = await ack(tx, "order_c", positions(first));
        throw new Error("handler failed");
      }),
    ).rejects.toThrow("handler failed");
    expect(countedBeforeRollback).toBe(2);
    expect(await receive(sql, "order_c", 10)).toEqual([]);
    expect(await ack(sql, "order_c", [positions(first)[0]!])).toBe(1);
    expect(ids(await receive(sql, "order_c", 10))).toEqual(["ord_a@2"]);
    // Acknowledged once: again counts nothing, and neither does a change never handed out.
    expect(await ack(sql, "order_c", [positions(first)[0]!])).toBe(0);
    expect(await ack(sql, "order_c", [999_999])).toBe(0);
  });

  it("hands out again a lease not acknowledged within visibility_seconds", async () => {
    const { sql } = db;
    await sql`select replica.create_consumer('slow')`;
    await writeChanges(sql, [orderChange("ord_v", 1, "placed", null)]);
    const [leased] = await receive(sql, "slow", 10, 1);
    expect(leased?.resource_id).toBe("ord_v");
    let again: { position: string }[] = [];
    for (let i = 0; i < 200 && again.length === 0; i++) {
      await new Promise((r) => setTimeout(r, 100));
      again = await receive(sql, "slow", 10, 3600);
    }
    expect(positions(again)).toEqual([Number(leased!.position)]);
    const [state] = await sql`select deliveries from sync.feed_consumer_leases where consumer_name = 'slow'`;
    expect(state!.deliveries).toBe(2);
  });

  it("lets only the first of two racing acks count, so the second caller can roll back", async () => {
    const { sql } = db;
    await sql`select replica.create_consumer('racing')`;
    await writeChanges(sql, [orderChange("ord_race", 1, "placed", null)]);
    const p = positions(await receive(sql, "racing", 10, 1));
    let firstDone!: () => void;
    const firstHolds = new Promise<void>((r) => {
      firstDone = r;
    });
    let releaseFirst!: () => void;
    const release = new Promise<void>((r) => {
      releaseFirst = r;
    });
    const first = sql.begin(async (tx) => {
      const n = await ack(tx, "racing", p);
      firstDone();
      await release;
      return n;
    });
    await firstHolds;
    const second = sql.begin((tx) => ack(tx, "racing", p));
    // The second waits on the first's row lock until the first commits, then finds it acknowledged.
    let waiting = 0;
    for (let i = 0; i < 600 && waiting === 0; i++) {
      await new Promise((r) => setTimeout(r, 50));
      const [row] = await sql<{ n: number }[]>`
        select count(*)::int as n from pg_stat_activity
        where datname = current_database() and wait_event_type = 'Lock' and query like '%ack_changes%'`;
      waiting = row!.n;
    }
    expect(waiting).toBe(1);
    releaseFirst();
    expect(await first).toBe(1);
    expect(await second).toBe(0);
  });

  it("filters by resource and merchant, in read_changes and in a consumer", async () => {
    const { sql } = db;
    await sql`select replica.create_consumer('m2_orders', array['order'], array['mer_two'])`;
    const [head] = await sql<
      { p: string }[]
    >`select coalesce(max(position), 0)::text as p from replica.changes`;
    await writeChanges(sql, [
      orderChange("ord_m1", 1, "placed", null, "mer_one"),
      orderChange("ord_m2", 1, "placed", null, "mer_two"),
      {
        resource: "location",
        resourceId: "loc_m2",
        merchantId: "mer_two",
        operation: "insert",
        source: "catchup",
      },
    ]);
    const after = Number(head!.p);
    expect(
      ids(await sql`select * from replica.read_changes(${after}, 100, array['order'], array['mer_two'])`),
    ).toEqual(["ord_m2@1"]);
    expect(
      (
        await sql`select resource_id from replica.read_changes(${after}, 100, merchant_ids => array['mer_two'])`
      ).map((r) => r.resource_id),
    ).toEqual(["ord_m2", "loc_m2"]);
    // Old callers: one and two arguments.
    expect((await sql`select * from replica.read_changes(${after}, 100)`).length).toBe(3);
    expect((await sql`select * from replica.read_changes(${after})`).length).toBe(3);
    expect(await sqlstate(sql`select * from replica.read_changes(0, 10, array['nope'])`)).toBe("22023");
    expect(ids(await receive(sql, "m2_orders"))).toEqual(["ord_m2@1"]);
  });

  it("raises changes_expired for a consumer whose unacknowledged changes were pruned", async () => {
    const { sql } = db;
    await sql`select replica.create_consumer('behind', after => 0)`;
    const [top] = await sql<{ p: string }[]>`select max(position)::text as p from replica.changes`;
    await sql`update replica.change_feed_state set pruned_through = ${top!.p}::bigint`;
    try {
      expect(await sqlstate(receive(sql, "behind"))).toBe("LS410");
      await sql`select sync.reset_consumer('behind', ${top!.p}::bigint)`;
      expect(await receive(sql, "behind")).toEqual([]);
    } finally {
      await sql`update replica.change_feed_state set pruned_through = 0`;
    }
  });

  it("is callable only by roles granted EXECUTE, which then change consumer state only through it", async () => {
    const { sql } = db;
    const role = `ls_consumer_${randomBytes(4).toString("hex")}`;
    await sql.unsafe(`create role ${role}`);
    try {
      await writeChanges(sql, [orderChange("ord_role", 1, "placed", null)]);
      const asRole = (q: string) =>
        sql.begin(async (tx) => {
          await tx.unsafe(`set local role ${role}`);
          return tx.unsafe(q);
        });
      await sql.unsafe(`grant usage on schema replica to ${role}`);
      expect(await sqlstate(asRole("select replica.create_consumer('r1', after => 0)"))).toBe("42501");
      await sql.unsafe(
        `grant execute on function replica.create_consumer(text, text[], text[], bigint), replica.drop_consumer(text),
           replica.receive_changes(text, integer, integer), replica.ack_changes(text, bigint[]) to ${role}`,
      );
      await asRole("select replica.create_consumer('r1', after => 0)");
      const got = await asRole("select * from replica.receive_changes('r1', 1000)");
      expect(got.length).toBeGreaterThan(0);
      expect(
        await asRole(`select replica.ack_changes('r1', array[${got[0]!.position}]::bigint[]) as n`),
      ).toEqual([{ n: 1 }]);
      expect(await sqlstate(asRole("update sync.feed_consumers set acked_through = 0"))).toBe("42501");
      expect(await sqlstate(asRole("select * from sync.feed_consumer_leases"))).toBe("42501");
      expect(await sqlstate(asRole("select sync.reset_consumer('r1', 0)"))).toBe("42501");
      await asRole("select replica.drop_consumer('r1')");
    } finally {
      await sql.unsafe(`drop owned by ${role}`);
      await sql.unsafe(`drop role ${role}`);
    }
  });
});
