// The change feed's guarantee under concurrency: a reader that always continues after the last position it
// processed sees every committed change exactly once, in order, while many writers commit out of order, one of
// them holds a row lock (or the feed itself) for a while, and one is killed mid-transaction. The last case runs
// the same race against the naive design (no feed lock) and shows the harness catches the change it skips.
import { connect, recordChanges, type Sql } from "@loops-sync/db";
import { applyOrdersIfNewer, orderChanges } from "@loops-sync/replica";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "../support/db.ts";
import { makeOrder } from "../support/make-order.ts";

const WRITERS = 8;
const TRANSACTIONS_PER_WRITER = 40;
const ORDERS = 12;

interface ReaderLog {
  seen: number[];
  /** Positions that came back at or below the cursor: a duplicate or an out-of-order read. */
  backwards: number[];
}

/** Reads the feed as a partner would, always after the last position it processed, until told to stop. */
function startReader(sql: Sql, stopped: () => boolean): { log: ReaderLog; done: Promise<void> } {
  const log: ReaderLog = { seen: [], backwards: [] };
  const done = (async () => {
    let cursor = 0;
    for (;;) {
      const finishing = stopped();
      const rows = await sql<{ position: string }[]>`
        select position from replica.read_changes(${cursor}, 7)`;
      for (const row of rows) {
        const position = Number(row.position);
        if (position <= cursor) log.backwards.push(position);
        else {
          log.seen.push(position);
          cursor = position;
        }
      }
      if (rows.length === 0) {
        if (finishing) return;
        await new Promise((r) => setTimeout(r, 1));
      }
    }
  })();
  return { log, done };
}

const jitter = () => new Promise((r) => setTimeout(r, Math.floor(Math.random() * 3)));

/** One writer: each transaction applies a newer version of a random order and records it last, as the worker does. */
async function write(sql: Sql, writer: number, versions: Map<string, number>): Promise<void> {
  for (let t = 0; t < TRANSACTIONS_PER_WRITER; t++) {
    const id = `ord_race_${(writer * 7 + t) % ORDERS}`;
    const version = (versions.get(id) ?? 0) + 1;
    versions.set(id, version);
    await sql.begin(async (tx) => {
      const applied = await applyOrdersIfNewer(tx, [makeOrder({ id, version, merchantId: "mer_race" })], {
        source: "catchup",
      });
      await jitter();
      await recordChanges(tx, orderChanges(applied, "catchup"));
    });
  }
}

/** Every position the table holds, to compare with what the reader saw. */
async function positionsInTable(sql: Sql): Promise<number[]> {
  const rows = await sql<{ position: string }[]>`select position from replica.changes order by position`;
  return rows.map((r) => Number(r.position));
}

interface Race {
  /** What the held transaction does before it waits: write its order row (the worker's way), or its change. */
  holdAfter: "row" | "change";
  /** The held transaction waits until the reader has passed a position committed after it began (or `maxHoldMs`). */
  maxHoldMs: number;
}

/**
 * Many writers, a transaction held open while the others commit, one writer killed with its change inserted,
 * and a reader; returns what the reader saw and what the table holds.
 */
async function race(db: TestDatabase, { holdAfter, maxHoldMs }: Race) {
  const pools = Array.from({ length: WRITERS + 2 }, () => connect(db.url, { max: 1 }));
  const [readerSql, holderSql, ...writerSqls] = pools as [Sql, Sql, ...Sql[]];
  let writing = true;
  const reader = startReader(readerSql, () => !writing);
  const versions = new Map<string, number>();
  try {
    const holder = holderSql.begin(async (tx) => {
      const applied = await applyOrdersIfNewer(tx, [
        makeOrder({ id: "ord_held", version: 1, merchantId: "mer_race" }),
      ]);
      const changes = orderChanges(applied, "webhook");
      if (holdAfter === "change") await recordChanges(tx, changes);
      const [mark] = await tx<{ head: string | null }[]>`select max(position) as head from replica.changes`;
      const passed = Number(mark?.head ?? 0);
      const until = Date.now() + maxHoldMs;
      // Hold the lock while the others commit, until the reader has moved past something committed meanwhile.
      while (Date.now() < until && !reader.log.seen.some((p) => p > passed + 2)) {
        await new Promise((r) => setTimeout(r, 5));
      }
      if (holdAfter === "row") await recordChanges(tx, changes);
    });
    // A writer killed with its change inserted (it holds the feed's lock, if there is one): it rolls back.
    const victim = connect(db.url, { max: 1 });
    const killed = victim
      .begin(async (tx) => {
        const applied = await applyOrdersIfNewer(tx, [
          makeOrder({ id: "ord_killed", version: 1, merchantId: "mer_race" }),
        ]);
        await recordChanges(tx, orderChanges(applied, "webhook"));
        const [me] = await tx<{ pid: number }[]>`select pg_backend_pid() as pid`;
        await db.sql`select pg_terminate_backend(${me!.pid})`;
        await tx`select pg_sleep(5)`;
      })
      .then(
        () => "committed",
        () => "killed",
      );
    await Promise.all([holder, ...writerSqls.map((sql, i) => write(sql, i, versions)), killed]);
    expect(await killed).toBe("killed");
    await victim.end({ timeout: 1 });
    writing = false;
    await reader.done;
    return { log: reader.log, table: await positionsInTable(readerSql) };
  } finally {
    writing = false;
    await reader.done.catch(() => {});
    await Promise.all(pools.map((p) => p.end({ timeout: 5 })));
  }
}

describe("the change feed under concurrent writers", () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase();
  });
  afterAll(async () => {
    await db.drop();
  });

  it("a reader sees every committed change once, in order, while a row stays locked and others commit", async () => {
    await db.sql`truncate replica.changes, replica.orders cascade`;
    const { log, table } = await race(db, { holdAfter: "row", maxHoldMs: 10_000 });
    expect(log.backwards).toEqual([]);
    expect(log.seen).toEqual(table);
    // Others committed while the row was held, and the held change still came after them.
    const [held] = await db.sql<{ position: string }[]>`
      select position from replica.changes where resource_id = 'ord_held'`;
    expect(Number(held!.position)).toBeGreaterThan(table[0]!);
    const killed = await db.sql`select 1 from replica.changes where resource_id = 'ord_killed'`;
    expect(killed).toHaveLength(0);
    expect(table.length).toBeGreaterThan(WRITERS * 5);
  });

  it("a writer holding the feed mid-transaction only makes the others wait: nothing is skipped", async () => {
    await db.sql`truncate replica.changes, replica.orders cascade`;
    const { log, table } = await race(db, { holdAfter: "change", maxHoldMs: 300 });
    expect(log.backwards).toEqual([]);
    expect(log.seen).toEqual(table);
  });

  it("without the feed's lock the same race makes the reader skip a change for good (the harness catches it)", async () => {
    const naive = await createTestDatabase();
    try {
      await naive.sql`drop trigger changes_in_commit_order on replica.changes`;
      const { log, table } = await race(naive, { holdAfter: "change", maxHoldMs: 10_000 });
      const missed = table.filter((p) => !log.seen.includes(p));
      expect(missed.length).toBeGreaterThan(0);
    } finally {
      await naive.drop();
    }
  });
});
