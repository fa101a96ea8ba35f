// The online runner (0025 on) against a real Postgres: steps each in their own transaction, lock retries while
// another transaction holds the table, batches in separate transactions, INVALID indexes rebuilt, resuming.
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { connect, DbError, migrate, pendingMigrations, type Sql } from "@loops-sync/db";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "../support/db.ts";

const FAST = { lockTimeoutMs: 100, giveUpAfterMs: 1500 };

describe("online migrations", { timeout: 120_000 }, () => {
  let db: TestDatabase;
  let dir: string;
  beforeAll(async () => {
    db = await createTestDatabase();
    // The runner's own tables, as any migrate leaves them (the template may predate sync.migration_steps).
    await migrate(db.sql, db.url, await mkdtemp(path.join(tmpdir(), "online-none-")));
  });
  afterAll(async () => {
    await db.drop();
  });
  beforeEach(async () => {
    dir = await mkdtemp(path.join(tmpdir(), "online-"));
    await db.sql`drop table if exists public.things`;
    await db.sql`delete from sync.migration_steps where migration_id >= 90`;
    await db.sql`delete from sync.migrations where id >= 90`;
    await db.sql`create table public.things (id int primary key, n int)`;
    await db.sql`insert into public.things select g, g from generate_series(1, 2500) g`;
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });
  const file = (name: string, sql: string) => writeFile(path.join(dir, name), sql);

  it("runs each step in its own transaction, records it, and batches a backfill", async () => {
    await file(
      "0090_things.sql",
      `-- Why: a test.

-- step: add things.label
alter table public.things add column if not exists label text;

-- step: index things by label
create index concurrently if not exists things_label on public.things (label);

-- step(batch): label the things, 1000 at a time
update public.things set label = 'n' || n
 where id in (select id from public.things where label is null limit 1000);
`,
    );
    const result = await migrate(db.sql, db.url, dir);
    expect(result.applied).toEqual(["0090_things.sql"]);
    expect(result.steps.map((s) => [s.step, s.mode, s.batches, s.rows])).toEqual([
      [1, "transaction", null, null],
      [2, "concurrently", null, null],
      [3, "batch", 4, 2500],
    ]);
    // Each batch committed on its own: the rows carry three different creating transactions.
    const [xmins] = await db.sql`select count(distinct xmin::text)::int as n from public.things`;
    expect(xmins!.n).toBe(3);
    const [index] = await db.sql`
      select i.indisvalid as valid from pg_index i where i.indexrelid = to_regclass('public.things_label')`;
    expect(index).toEqual({ valid: true });
    const steps =
      await db.sql`select step, tries, batches from sync.migration_steps where migration_id = 90 order by step`;
    expect(steps).toEqual([
      { step: 1, tries: 1, batches: null },
      { step: 2, tries: 1, batches: null },
      { step: 3, tries: 1, batches: 4 },
    ]);
    expect(await pendingMigrations(db.sql, dir)).toEqual([]);
    expect((await migrate(db.sql, db.url, dir)).applied).toEqual([]);
  });

  it("retries a step blocked by a transaction on the table, and succeeds once it commits", async () => {
    await file(
      "0091_blocked.sql",
      "-- step: add things.flag\nalter table public.things add column if not exists flag boolean;\n",
    );
    const blocker = connect(db.url, { max: 1, applicationName: "test blocker" });
    try {
      const reserved = await blocker.reserve();
      await reserved`begin`;
      await reserved`select count(*) from public.things`;
      const running = migrate(db.sql, db.url, dir, { lockTimeoutMs: 100, giveUpAfterMs: 30_000 });
      await new Promise((r) => setTimeout(r, 1500));
      await reserved`commit`;
      reserved.release();
      const result = await running;
      expect(result.steps[0]!.tries).toBeGreaterThan(1);
      const [column] = await db.sql`select count(*)::int as n from information_schema.columns
        where table_name = 'things' and column_name = 'flag'`;
      expect(column!.n).toBe(1);
    } finally {
      await blocker.end();
    }
  });

  it("gives up on a blocker that never lets go, naming its application_name and query", async () => {
    await file(
      "0092_stuck.sql",
      "-- step: add things.stuck\nalter table public.things add column if not exists stuck int;\n",
    );
    const blocker = connect(db.url, { max: 1, applicationName: "test blocker" });
    try {
      const reserved = await blocker.reserve();
      await reserved`begin`;
      await reserved.unsafe(
        "select n from public.things where n::text is distinct from 'secret-value' limit 1",
      );
      const error = await migrate(db.sql, db.url, dir, FAST).catch((e: unknown) => e);
      await reserved`rollback`;
      reserved.release();
      expect(error).toBeInstanceOf(DbError);
      expect((error as DbError).code).toBe("migration_blocked");
      const message = (error as Error).message;
      expect(message).toMatch(
        /^migration 0092_stuck\.sql step 1 \(add things\.stuck\) gave up after \d+ tries in \d+ s \(lock timeout\): blocked by pid \d+ \(application_name "test blocker", idle in transaction for \d+ s\): "select n from public\.things where n::text is distinct from '…' limit 1"/,
      );
      expect(message).not.toContain("secret-value");
      expect(await pendingMigrations(db.sql, dir)).toEqual(["0092_stuck.sql"]);
    } finally {
      await blocker.end();
    }
  });

  it("rebuilds an INVALID index a failed concurrent build left behind", async () => {
    // A unique index over duplicates fails and stays INVALID; the step then builds it again after the fix.
    await db.sql`update public.things set n = 1 where id <= 2`;
    await db.sql`create unique index concurrently things_n on public.things (n)`.catch(() => {});
    const [before] =
      await db.sql`select indisvalid as valid from pg_index where indexrelid = to_regclass('public.things_n')`;
    expect(before).toEqual({ valid: false });
    await db.sql`update public.things set n = -id where id <= 2`;
    await file(
      "0093_index.sql",
      "-- step: unique n\ncreate unique index concurrently if not exists things_n on public.things (n);\n",
    );
    await migrate(db.sql, db.url, dir);
    const [after] =
      await db.sql`select indisvalid as valid from pg_index where indexrelid = to_regclass('public.things_n')`;
    expect(after).toEqual({ valid: true });
  });

  it("stops at a failing step, keeps the steps before it, and resumes there; the file stays pending", async () => {
    const sqlOf = (guard: string) =>
      `-- step: add things.a\nalter table public.things add column if not exists a int;\n\n-- step: fail until guarded\ndo $$ begin ${guard} end $$;\n`;
    await db.sql`create table if not exists public.gate (open boolean)`;
    await db.sql`delete from public.gate`;
    await file(
      "0094_resume.sql",
      sqlOf("if not exists (select from public.gate where open) then raise exception 'gate closed'; end if;"),
    );
    const error = await migrate(db.sql, db.url, dir).catch((e: unknown) => e);
    expect((error as DbError).code).toBe("migration_failed");
    expect((error as Error).message).toMatch(
      /^migration 0094_resume\.sql step 2 \(fail until guarded\) failed: gate closed; /,
    );
    expect(await db.sql`select step from sync.migration_steps where migration_id = 94`).toEqual([
      { step: 1 },
    ]);
    expect(await pendingMigrations(db.sql, dir)).toEqual(["0094_resume.sql"]);
    await db.sql`insert into public.gate values (true)`;
    const result = await migrate(db.sql, db.url, dir);
    expect(result.steps.map((s) => s.step)).toEqual([2]);
    expect(await pendingMigrations(db.sql, dir)).toEqual([]);
  });

  it("refuses an edit of a partly applied file", async () => {
    await file(
      "0095_edit.sql",
      "-- step: one\ncreate table if not exists public.e1 (id int);\n-- step: two\nselect 1/0;\n",
    );
    await migrate(db.sql, db.url, dir).catch(() => {});
    await file(
      "0095_edit.sql",
      "-- step: one\ncreate table if not exists public.e1 (id int);\n-- step: two\nselect 1;\n",
    );
    const error = await migrate(db.sql, db.url, dir).catch((e: unknown) => e);
    expect((error as DbError).code).toBe("migration_changed");
    expect((error as Error).message).toMatch(
      /^migration 0095_edit\.sql was edited after steps 1 of it were applied/,
    );
  });

  it("refuses a malformed file before running anything", async () => {
    await file("0096_first.sql", "-- step: fine\ncreate table if not exists public.m1 (id int);\n");
    await file(
      "0097_bad.sql",
      "-- step: two statements with concurrently\ncreate index concurrently if not exists m_a on public.things (n);\nselect 1;\n",
    );
    const error = await migrate(db.sql, db.url, dir).catch((e: unknown) => e);
    expect((error as DbError).code).toBe("migration_malformed");
    expect((error as Error).message).toMatch(
      /^migration 0097_bad\.sql is malformed: step 1 .* a concurrently statement is a step of its own$/,
    );
    const [m1] = await db.sql`select to_regclass('public.m1') as t`;
    expect(m1!.t).toBeNull();
  });

  it("serialises concurrent migrators: each step runs once, both succeed", async () => {
    await file(
      "0098_both.sql",
      "-- step: count runs\ncreate table if not exists public.runs (n int);\n-- step: once\ninsert into public.runs values (1);\n",
    );
    const results = await Promise.all([migrate(db.sql, db.url, dir), migrate(db.sql, db.url, dir)]);
    expect(results.map((r) => r.applied).sort()).toEqual([[], ["0098_both.sql"]]);
    const [runs] = await db.sql`select count(*)::int as n from public.runs`;
    expect(runs!.n).toBe(1);
  });
});

export type { Sql };
