// consumeChanges and snapshotThenFollow against a real Postgres: several instances share one consumer, each
// change is handled once with its ack, in order per resource; woken by NOTIFY; resuming after its connections
// are killed; and a snapshot of the mirror followed without a gap or a double.
import { connect, recordChanges, type Sql } from "@loops-sync/db";
import { consumeChanges, snapshotThenFollow } from "@loops-sync/schema";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { waitFor } from "#testkit/wait-for";
import { createTestDatabase, type TestDatabase } from "../support/db.ts";
import { orderChange, writeChanges } from "../support/write-changes.ts";

/** Long enough that only a notification (or a reconnect) can wake an instance within a test. */
const NEVER_MS = 600_000;

describe("consumeChanges", () => {
  let db: TestDatabase;
  const pools: Sql[] = [];
  const stops: AbortController[] = [];
  const pool = (applicationName: string) => {
    const sql = connect(db.url, { max: 3, applicationName });
    pools.push(sql);
    return sql;
  };
  beforeAll(async () => {
    db = await createTestDatabase();
    await db.sql`create table public.handled (
      seq bigint generated always as identity, consumer text, position bigint, order_id text, version int, by text)`;
  });
  afterEach(async () => {
    for (const s of stops.splice(0)) s.abort();
    await Promise.all(pools.splice(0).map((p) => p.end({ timeout: 5 })));
  });
  afterAll(async () => {
    await db?.drop();
  });

  const start = (
    consumer: string,
    name: string,
    options: { pollIntervalMs?: number; onError?: () => void } = {},
  ) => {
    const controller = new AbortController();
    stops.push(controller);
    const done = consumeChanges(
      pool(`consume-${name}`),
      { consumer, signal: controller.signal, pollIntervalMs: options.pollIntervalMs ?? NEVER_MS, ...options },
      async (change, tx) => {
        await tx`insert into public.handled (consumer, position, order_id, version, by)
          values (${consumer}, ${change.position}, ${change.resource_id}, ${change.version}, ${name})`;
      },
    );
    return { done, stop: () => controller.abort() };
  };
  const handled = async (consumer: string) =>
    db.sql<{ position: number; order_id: string; version: number; by: string }[]>`
      select position::int, order_id, version, by from public.handled where consumer = ${consumer} order by seq`;

  it("hands each change to one of three instances, once, in order per order, woken by NOTIFY", async () => {
    await db.sql`select replica.create_consumer('three')`;
    const instances = ["a", "b", "c"].map((n) => start("three", n));
    for (let v = 1; v <= 4; v++) {
      await writeChanges(
        db.sql,
        Array.from({ length: 6 }, (_, i) =>
          orderChange(`ord_t${i}`, v, `s${v}`, v === 1 ? null : `s${v - 1}`),
        ),
      );
    }
    await waitFor(async () => (await handled("three")).length >= 24, { what: "every change handled" });
    for (const i of instances) i.stop();
    await Promise.all(instances.map((i) => i.done));
    const rows = await handled("three");
    expect(rows).toHaveLength(24);
    expect(new Set(rows.map((r) => r.position)).size).toBe(24);
    for (let i = 0; i < 6; i++) {
      expect(rows.filter((r) => r.order_id === `ord_t${i}`).map((r) => r.version)).toEqual([1, 2, 3, 4]);
    }
    const [left] = await db.sql`select count(*)::int as n from replica.receive_changes('three')`;
    expect(left!.n).toBe(0);
  });

  it("rolls back a failing handler's writes and hands the change out again", async () => {
    await db.sql`select replica.create_consumer('flaky')`;
    const controller = new AbortController();
    stops.push(controller);
    let failures = 0;
    const seen: number[] = [];
    const done = consumeChanges(
      pool("consume-flaky"),
      {
        consumer: "flaky",
        signal: controller.signal,
        visibilitySeconds: 1,
        pollIntervalMs: 200,
        onError: () => {},
      },
      async (change, tx) => {
        await tx`insert into public.handled (consumer, position, order_id, version, by)
          values ('flaky', ${change.position}, ${change.resource_id}, ${change.version}, 'f')`;
        seen.push(change.position);
        if (failures++ === 0) throw new Error("first attempt fails");
      },
    );
    await writeChanges(db.sql, [orderChange("ord_flaky", 1, "placed", null)]);
    await waitFor(async () => (await handled("flaky")).length === 1, {
      timeoutMs: 60_000,
      what: "the retry",
    });
    controller.abort();
    await done;
    expect(seen).toHaveLength(2);
    expect(seen[0]).toBe(seen[1]);
    expect(await handled("flaky")).toHaveLength(1);
  });

  it("rolls back a handler whose lease expired and another instance acknowledged first", async () => {
    await db.sql`select replica.create_consumer('lost')`;
    const controller = new AbortController();
    stops.push(controller);
    let aGotIt!: () => void;
    const aHolds = new Promise<void>((r) => {
      aGotIt = r;
    });
    const byB = async () =>
      (await db.sql`select 1 from public.handled where consumer = 'lost' and by = 'B'`).length > 0;
    const a = consumeChanges(
      pool("consume-lost-a"),
      { consumer: "lost", signal: controller.signal, visibilitySeconds: 1, pollIntervalMs: NEVER_MS },
      async (change, tx) => {
        await tx`insert into public.handled (consumer, position, order_id, version, by)
          values ('lost', ${change.position}, ${change.resource_id}, ${change.version}, 'A')`;
        aGotIt();
        // Slower than the lease: B gets the change meanwhile and acknowledges it first.
        await waitFor(byB, { timeoutMs: 60_000, what: "B to handle the expired lease" });
      },
    );
    await writeChanges(db.sql, [orderChange("ord_lost", 1, "placed", null)]);
    await aHolds;
    const b = start("lost", "B", { pollIntervalMs: 200 });
    await waitFor(byB, { timeoutMs: 60_000, what: "B's handling" });
    await waitFor(async () => (await db.sql`select 1 from replica.receive_changes('lost')`).length === 0, {
      what: "the change acknowledged",
    });
    controller.abort();
    b.stop();
    await Promise.all([a, b.done]);
    expect((await handled("lost")).map((r) => r.by)).toEqual(["B"]);
  });

  it("ends with the handler's error when no onError is given", async () => {
    await db.sql`select replica.create_consumer('strict')`;
    await writeChanges(db.sql, [orderChange("ord_strict", 1, "placed", null)]);
    const done = consumeChanges(pool("consume-strict"), { consumer: "strict" }, () => {
      throw new Error("boom");
    });
    await expect(done).rejects.toThrow("boom");
    await expect(consumeChanges(db.sql, { consumer: "no such one!" }, () => {})).rejects.toThrow(RangeError);
  });

  it("resumes after its connections are terminated, with no loss and no double", async () => {
    await db.sql`select replica.create_consumer('killed')`;
    const instance = start("killed", "killed", { pollIntervalMs: 500 });
    await writeChanges(db.sql, [orderChange("ord_k", 1, "placed", null)]);
    await waitFor(async () => (await handled("killed")).length === 1, { what: "the first change" });
    for (let round = 2; round <= 4; round++) {
      const killed = await db.sql`
        select pg_terminate_backend(pid) from pg_stat_activity where application_name = 'consume-killed'`;
      expect(killed.length).toBeGreaterThan(0);
      await writeChanges(db.sql, [orderChange("ord_k", round, `s${round}`, `s${round - 1}`)]);
      await waitFor(async () => (await handled("killed")).length === round, {
        timeoutMs: 60_000,
        what: `the change after kill ${round}`,
      });
    }
    instance.stop();
    await instance.done;
    expect((await handled("killed")).map((r) => r.version)).toEqual([1, 2, 3, 4]);
  });
});

describe("snapshotThenFollow", () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase();
  });
  afterAll(async () => {
    await db?.drop();
  });

  it("reads the mirror and the position together, then follows without a gap or a double", async () => {
    const writer = connect(db.url, { max: 1 });
    let writing = true;
    let n = 0;
    // Each commit adds a channel and its change together, as the mirror's writers do.
    const writes = (async () => {
      while (writing || n < 20) {
        const id = `chn_snap_${n++}`;
        await writer.begin(async (tx) => {
          await tx`insert into replica.channels (id, raw) values (${id}, '{}'::jsonb)`;
          await recordChanges(tx, [
            { resource: "channel", resourceId: id, merchantId: null, operation: "insert", source: "catchup" },
          ]);
        });
      }
    })();
    await waitFor(() => n >= 5, { what: "some channels" });
    const controller = new AbortController();
    const { snapshot, after, changes } = await snapshotThenFollow(
      db.sql,
      async (tx) =>
        (await tx<{ id: string }[]>`select id from replica.channels order by id`).map((r) => r.id),
      { signal: controller.signal, pollIntervalMs: 200 },
    );
    writing = false;
    await writes;
    await writer.end();
    const followed: string[] = [];
    for await (const change of changes) {
      expect(change.position).toBeGreaterThan(after);
      followed.push(change.resource_id);
      if (snapshot.length + followed.length >= n) controller.abort();
    }
    const all = Array.from({ length: n }, (_, i) => `chn_snap_${i}`);
    expect([...snapshot, ...followed].sort()).toEqual(all.sort());
    expect(new Set([...snapshot, ...followed]).size).toBe(n);
    const [seen] = await db.sql<{ n: number }[]>`
      select count(*)::int as n from replica.changes where position <= ${after} and resource = 'channel'`;
    expect(seen!.n).toBe(snapshot.length);
  });
});
