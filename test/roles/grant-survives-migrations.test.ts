import { randomBytes } from "node:crypto";
import { cp, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { connect, grantRoleRights, MIGRATIONS_DIR, migrate, type Sql } from "@loops-sync/db";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "../support/db.ts";
import { createTestRole, outcome, type TestRole } from "../support/test-role.ts";

/** This build's migrations plus one a later release might add: a table in replica and a view in reporting. */
async function migrationsWithALaterOne(): Promise<string> {
  const dir = await mkdtemp(path.join(tmpdir(), "migrations-later-"));
  await cp(MIGRATIONS_DIR, dir, { recursive: true });
  await writeFile(
    path.join(dir, "9000_later_objects.sql"),
    `-- step: later objects
     create table replica.later_things (id text primary key);
     insert into replica.later_things values ('thing_1');
     create view reporting.later_summary as select count(*)::int as things from replica.later_things;
     create function replica.receive_changes(stand_in_marker text) returns text
       language sql security definer set search_path = pg_catalog as $$ select stand_in_marker $$;
     revoke execute on function replica.receive_changes(text) from public;`,
  );
  return dir;
}

describe("rights granted once stay true after later migrations", { timeout: 180_000 }, () => {
  let db: TestDatabase;
  let reader: TestRole;
  let consumer: TestRole;
  let gone: TestRole;
  let asReader: Sql;
  let asConsumer: Sql;
  let dir: string;

  beforeAll(async () => {
    db = await createTestDatabase();
    [reader, consumer, gone] = await Promise.all([
      createTestRole("ls_reader"),
      createTestRole("ls_consumer"),
      createTestRole("ls_gone"),
    ]);
    await grantRoleRights(db.sql, { role: reader.name, rights: "reader" });
    await grantRoleRights(db.sql, { role: consumer.name, rights: "consumer" });
    await grantRoleRights(db.sql, { role: gone.name, rights: "reader" });
    // A role dropped after its grant (its rights in this database dropped first, as Postgres requires).
    await db.sql.unsafe(`drop owned by ${gone.name}`);
    await gone.drop();
    dir = await migrationsWithALaterOne();
    expect((await migrate(db.sql, db.url, dir)).applied).toEqual(["9000_later_objects.sql"]);
    asReader = reader.connect(db.url);
    asConsumer = consumer.connect(db.url);
  });

  afterAll(async () => {
    await asReader?.end();
    await asConsumer?.end();
    await db.drop();
    await Promise.all([reader.drop(), consumer.drop()]);
    await rm(dir, { recursive: true, force: true });
  });

  it("covers a table and a view the later migration added, without a new grant", async () => {
    expect(await asReader`select id from replica.later_things`).toEqual([{ id: "thing_1" }]);
    expect(await asReader`select things from reporting.later_summary`).toEqual([{ things: 1 }]);
    expect(await outcome(asReader`insert into replica.later_things values ('thing_2')`)).toBe("42501");
  });

  it("gives a consumer the consumer function the later migration added, and a reader not", async () => {
    expect(await asConsumer`select replica.receive_changes(stand_in_marker => 'x') as r`).toEqual([
      { r: "x" },
    ]);
    expect(await outcome(asReader`select replica.receive_changes(stand_in_marker => 'x')`)).toBe("42501");
  });

  it("forgets a role dropped since", async () => {
    const rows = await db.sql`select role_name, rights from sync.role_grants order by rights, role_name`;
    expect(rows).toEqual([
      { role_name: consumer.name, rights: "consumer" },
      { role_name: reader.name, rights: "reader" },
    ]);
  });
});

describe("a role whose name needs quoting", { timeout: 180_000 }, () => {
  const name = `Analyst "${randomBytes(4).toString("hex")}"`;
  const quoted = `"${name.replaceAll('"', '""')}"`;
  let db: TestDatabase;
  let admin: Sql;

  beforeAll(async () => {
    db = await createTestDatabase();
    admin = connect(inject("databaseUrl"), { max: 1 });
    await admin.unsafe(`create role ${quoted} login`);
  });
  afterAll(async () => {
    await db.drop();
    await admin.unsafe(`drop role if exists ${quoted}`);
    await admin.end();
  });

  it("is granted and revoked by its exact name", async () => {
    const granted = await grantRoleRights(db.sql, { role: name, rights: "reader" });
    expect(granted).toMatchObject({ role: name, rights: "reader", schemas: ["replica", "reporting"] });
    const u = new URL(db.url);
    u.username = encodeURIComponent(name);
    const asIt = connect(u.toString(), { max: 1 });
    try {
      expect(await outcome(asIt`select * from replica.orders`)).toBe("ok");
      expect(await outcome(asIt`delete from replica.orders`)).toBe("42501");
      await grantRoleRights(db.sql, { role: name, rights: "reader", revoke: true });
      expect(await outcome(asIt`select * from replica.orders`)).toBe("42501");
    } finally {
      await asIt.end();
    }
  });
});
