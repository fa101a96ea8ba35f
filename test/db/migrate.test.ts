import { mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { DbError, migrate, pendingMigrations } from "@loops-sync/db";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "../support/db.ts";

describe("migrate", () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase();
  });
  afterAll(async () => {
    await db.drop();
  });

  it("leaves the contract's tables and graphile-worker's schema in place", async () => {
    const tables = await db.sql`
      select table_schema || '.' || table_name as name from information_schema.tables
      where table_schema in ('sync', 'replica') order by 1`;
    const names = tables.map((t) => t.name);
    for (const required of [
      "sync.events",
      "sync.cursors",
      "replica.orders",
      "replica.order_items",
      "replica.order_status_history",
    ]) {
      expect(names).toContain(required);
    }
    const [worker] =
      await db.sql`select count(*)::int as n from information_schema.routines where routine_schema = 'graphile_worker' and routine_name = 'add_job'`;
    expect(worker!.n).toBeGreaterThan(0);
    expect(await pendingMigrations(db.sql)).toEqual([]);
  });

  it("is a no-op when run again", async () => {
    expect((await migrate(db.sql, db.url)).applied).toEqual([]);
  });

  it("applies new files in order and refuses an edited applied one", async () => {
    const dir = await mkdtemp(path.join(tmpdir(), "migrations-"));
    await writeFile(path.join(dir, "0001_a.sql"), "create table public.a (id int primary key);");
    await writeFile(path.join(dir, "0002_b.sql"), "create table public.b (id int references public.a (id));");
    const scratch = await createTestDatabase({ empty: true });
    try {
      expect((await migrate(scratch.sql, scratch.url, dir)).applied).toEqual(["0001_a.sql", "0002_b.sql"]);
      await writeFile(path.join(dir, "0001_a.sql"), "create table public.a (id bigint primary key);");
      const error = await migrate(scratch.sql, scratch.url, dir).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(DbError);
      expect((error as DbError).kind).toBe("migration");
      expect((error as DbError).code).toBe("migration_changed");
      expect((error as Error).message).toMatch(
        /^migration 0001_a\.sql was edited after it was applied .*new migration$/,
      );
    } finally {
      await scratch.drop();
    }
  });

  it("rolls back a failing migration whole", async () => {
    const dir = await mkdtemp(path.join(tmpdir(), "migrations-"));
    await writeFile(path.join(dir, "0001_ok.sql"), "create table public.ok (id int);");
    await writeFile(path.join(dir, "0002_bad.sql"), "create table public.half (id int); select 1/0;");
    const scratch = await createTestDatabase({ empty: true });
    try {
      const error = await migrate(scratch.sql, scratch.url, dir).catch((e: unknown) => e);
      expect((error as DbError).code).toBe("migration_failed");
      const [half] = await scratch.sql`select to_regclass('public.half') as t`;
      expect(half!.t).toBeNull();
    } finally {
      await scratch.drop();
    }
  });

  it("runs 0001–0024 whole as before, and refuses a file from 0025 that is not a list of steps", async () => {
    const dir = await mkdtemp(path.join(tmpdir(), "migrations-"));
    await writeFile(path.join(dir, "0024_whole.sql"), "create table public.whole (id int);");
    await writeFile(path.join(dir, "0025_plain.sql"), "create table public.plain (id int);");
    const scratch = await createTestDatabase({ empty: true });
    try {
      const error = await migrate(scratch.sql, scratch.url, dir).catch((e: unknown) => e);
      expect((error as DbError).code).toBe("migration_malformed");
      expect((error as Error).message).toBe(
        'migration 0025_plain.sql is malformed: SQL before the first "-- step:" line; every statement belongs to a step',
      );
      // Refused before anything ran: the whole-file migration before it is not applied either.
      expect(await pendingMigrations(scratch.sql, dir)).toEqual(["0024_whole.sql", "0025_plain.sql"]);
      await writeFile(
        path.join(dir, "0025_plain.sql"),
        "-- step: a table\ncreate table if not exists public.plain (id int);\n",
      );
      expect((await migrate(scratch.sql, scratch.url, dir)).applied).toEqual([
        "0024_whole.sql",
        "0025_plain.sql",
      ]);
      const [steps] = await scratch.sql`select count(*)::int as n from sync.migration_steps`;
      expect(steps!.n).toBe(1);
      const started = performance.now();
      expect((await migrate(scratch.sql, scratch.url, dir)).applied).toEqual([]);
      // The promise (docs/upgrading.md): migrate again is a no-op within 5 s; wide margin on a busy machine.
      expect(performance.now() - started).toBeLessThan(5000);
    } finally {
      await scratch.drop();
    }
  });
});
