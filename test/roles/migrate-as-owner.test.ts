import { randomBytes } from "node:crypto";
import { cp, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { connect, DbError, MIGRATIONS_DIR, migrate, type Sql } from "@loops-sync/db";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { withDatabase } from "#testkit/scratch-database";
import { runCli } from "../support/operator-run.ts";
import { createTestRole, outcome, type TestRole } from "../support/test-role.ts";

// A real process on a machine other tests load too: seconds each, so far more than runCli's 30 s default.
const CLI_TIMEOUT_MS = 120_000;

// A managed Postgres (RDS, Cloud SQL, Azure, Supabase…): the service's role owns its database and is no
// superuser, may not create roles or databases. Everything loops-sync does must work as that role.
describe("migrate and grant as a database owner that is no superuser", { timeout: 180_000 }, () => {
  const name = `loops_sync_owner_${randomBytes(5).toString("hex")}`;
  let owner: TestRole;
  let reader: TestRole;
  let stranger: TestRole;
  let url: string;
  let asOwner: Sql;
  let asReader: Sql;
  let migrated: Awaited<ReturnType<typeof runCli>>;

  beforeAll(async () => {
    [owner, reader, stranger] = await Promise.all([
      createTestRole("ls_owner"),
      createTestRole("ls_reader"),
      createTestRole("ls_stranger"),
    ]);
    const admin = connect(inject("databaseUrl"), { max: 1 });
    try {
      await admin.unsafe(`create database ${name} owner ${owner.name} template template0`);
    } finally {
      await admin.end();
    }
    url = owner.urlFor(withDatabase(inject("databaseUrl"), name));
    migrated = await runCli(["migrate"], { DATABASE_URL: url }, CLI_TIMEOUT_MS);
    asOwner = owner.connect(url);
    asReader = reader.connect(withDatabase(reader.urlFor(inject("databaseUrl")), name));
  }, 180_000);

  afterAll(async () => {
    await asReader?.end();
    await asOwner?.end();
    const admin = connect(inject("databaseUrl"), { max: 1 });
    try {
      await admin.unsafe(`drop database if exists ${name} with (force)`);
    } finally {
      await admin.end();
    }
    await Promise.all([owner.drop(), reader.drop(), stranger.drop()]);
  });

  it("runs every migration, ours and graphile-worker's", async () => {
    expect(migrated.stderr).toBe("");
    expect(migrated.code).toBe(0);
    expect(migrated.stdout).toMatch(
      /^migrations: applied 0001_sync\.sql, .*0024_role_grants\.sql(, \d{4}_\w+\.sql)*\n$/,
    );
    const [who] = await asOwner`
      select r.rolsuper, r.rolcreaterole, r.rolcreatedb,
             (select count(*)::int from graphile_worker.migrations) as worker_migrations,
             (select nspowner::regrole::text from pg_namespace where nspname = 'graphile_worker') as worker_owner
        from pg_roles r where r.rolname = current_user`;
    expect(who).toEqual({
      rolsuper: false,
      rolcreaterole: false,
      rolcreatedb: false,
      worker_migrations: expect.any(Number),
      worker_owner: owner.name,
    });
    expect(who!.worker_migrations).toBeGreaterThan(10);
    expect((await runCli(["migrate"], { DATABASE_URL: url }, CLI_TIMEOUT_MS)).stdout).toBe(
      "migrations: up to date\n",
    );
  });

  it("grants a reader without CREATEROLE, and the reader reads and cannot write", async () => {
    const run = await runCli(["grant", "reader", reader.name], { DATABASE_URL: url }, CLI_TIMEOUT_MS);
    expect(run.stderr).toBe("");
    expect(run.code).toBe(0);
    expect(await outcome(asReader`select * from replica.orders`)).toBe("ok");
    expect(await outcome(asReader`select * from reporting.sync_health`)).toBe("ok");
    expect(await outcome(asReader`select * from replica.read_changes(0)`)).toBe("ok");
    expect(await outcome(asReader`delete from replica.orders`)).toBe("42501");
    expect(await outcome(asReader`select * from sync.events`)).toBe("42501");
  });

  it("refuses the owner itself as a reader: its rights cannot be narrowed", async () => {
    const run = await runCli(["grant", "reader", owner.name], { DATABASE_URL: url }, CLI_TIMEOUT_MS);
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(new RegExp(`role "${owner.name}" owns the mirror`));
  });

  it("rolls a migration back whole when what it leaves cannot be granted", async () => {
    // A table in replica that someone else owns: the owner cannot grant on it, so migrate must not go half-way.
    const admin = connect(withDatabase(inject("databaseUrl"), name), { max: 1 });
    try {
      await admin.unsafe(
        `create table replica.alien (id int); alter table replica.alien owner to ${stranger.name}`,
      );
    } finally {
      await admin.end();
    }
    const dir = await mkdtemp(path.join(tmpdir(), "migrations-owner-"));
    try {
      await cp(MIGRATIONS_DIR, dir, { recursive: true });
      await writeFile(
        path.join(dir, "9000_later_objects.sql"),
        "-- step: a later table\ncreate table replica.later_things (id text);\n",
      );
      const error = await migrate(asOwner, url, dir).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(DbError);
      expect((error as DbError).code).toBe("migration_grants");
      expect((error as Error).message).toMatch(
        new RegExp(
          `^migrate: cannot keep role ${reader.name}'s reader rights \\(loops-sync grant\\): cannot grant ${reader.name} rights on replica\\.alien \\(owned by ${stranger.name}\\): ${owner.name} does not own it; alter its owner to the role that runs loops-sync migrate, or drop it; nothing was applied$`,
        ),
      );
      const [state] = await asOwner`
        select to_regclass('replica.later_things') as later,
               (select count(*)::int from sync.migrations where id = 9000) as recorded`;
      expect(state).toEqual({ later: null, recorded: 0 });
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
