import type { Sql } from "@loops-sync/db";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "../support/db.ts";
import { runCli } from "../support/operator-run.ts";
import { insertLocations, insertOrders } from "../support/seed-orders.ts";
import { seedSyncState } from "../support/seed-sync-state.ts";
import { createTestRole, outcome, type TestRole } from "../support/test-role.ts";
import { writeNewOrders } from "../support/write-changes.ts";

// A real process on a machine other tests load too: seconds each, so far more than runCli's 30 s default.
const CLI_TIMEOUT_MS = 120_000;

const DENIED = "42501";

/** Every table and view of a schema, as `schema.name`. */
async function relationsOf(sql: Sql, schema: string): Promise<string[]> {
  const rows = await sql<{ name: string }[]>`
    select format('%I.%I', n.nspname, c.relname) as name from pg_class c join pg_namespace n on n.oid = c.relnamespace
     where n.nspname = ${schema} and c.relkind in ('r', 'v', 'm', 'p', 'f') order by 1`;
  return rows.map((r) => r.name);
}

describe("loops-sync grant reader", { timeout: 180_000 }, () => {
  let db: TestDatabase;
  let reader: TestRole;
  let asReader: Sql;
  let granted: Awaited<ReturnType<typeof runCli>>;

  beforeAll(async () => {
    db = await createTestDatabase();
    reader = await createTestRole("ls_reader");
    await insertLocations(db.sql, [
      { id: "loc_1", merchantId: "mer_alpha", timezone: "Asia/Riyadh", nameEn: "Olaya", nameAr: "العليا" },
    ]);
    await insertOrders(db.sql, [
      {
        id: "ord_1",
        merchantId: "mer_alpha",
        locationId: "loc_1",
        channel: "hungerstation",
        status: "delivered",
        createdAt: "2026-11-20T10:00:00Z",
        currency: "SAR",
        subtotal: 5000,
        discount: 0,
        deliveryFee: 500,
        tax: 750,
        total: 6250,
        items: [{ nameEn: "Tea", nameAr: "شاي", sku: "tea", quantity: 2, unitPrice: 2500, modifiers: [] }],
        history: [
          { status: "placed", at: "2026-11-20T10:00:00Z" },
          { status: "delivered", at: "2026-11-20T10:30:00Z" },
        ],
      },
    ]);
    await writeNewOrders(db.sql, "roles", 3);
    await seedSyncState(db.sql);
    granted = await runCli(["grant", "reader", reader.name], { DATABASE_URL: db.url }, CLI_TIMEOUT_MS);
    asReader = reader.connect(db.url);
  }, 180_000);

  afterAll(async () => {
    await asReader?.end();
    await db.drop();
    await reader.drop();
  });

  it("says what the role can do now", () => {
    expect(granted.stderr).toBe("");
    expect(granted.code).toBe(0);
    expect(granted.stdout).toMatch(
      new RegExp(
        `^grant: role ${reader.name} is a reader in database \\w+ \\(had: none\\): reads replica, reporting; executes replica\\.read_changes\\(bigint,integer,text\\[\\],text\\[\\]\\); writes nothing else\\n$`,
      ),
    );
  });

  it("reads every table of replica and every view of reporting", async () => {
    const relations = [
      ...(await relationsOf(db.sql, "replica")),
      ...(await relationsOf(db.sql, "reporting")),
    ];
    expect(relations).toContain("replica.orders");
    expect(relations).toContain("reporting.sync_health");
    for (const relation of relations) {
      expect([relation, await outcome(asReader.unsafe(`select * from ${relation} limit 1`))]).toEqual([
        relation,
        "ok",
      ]);
    }
    const [order] =
      await asReader`select status, total_amount from reporting.orders where order_id = 'ord_1'`;
    expect(order).toEqual({ status: "delivered", total_amount: 6250 });
    // sync_health reads sync.* with its owner's rights: the reader sees it without any right on sync.
    const health = await asReader`select merchant_id from reporting.sync_health order by 1`;
    expect(health.map((r) => r.merchant_id)).toContain("mer_alpha");
  });

  it("calls read_changes and gets the feed", async () => {
    const rows = await asReader`select resource_id from replica.read_changes(0, 10) order by position`;
    expect(rows.map((r) => r.resource_id)).toEqual(["ord_roles_0", "ord_roles_1", "ord_roles_2"]);
  });

  it("cannot insert, update or delete in replica", async () => {
    for (const table of await relationsOf(db.sql, "replica")) {
      expect([table, await outcome(asReader.unsafe(`delete from ${table}`))]).toEqual([table, DENIED]);
      expect([table, await outcome(asReader.unsafe(`insert into ${table} default values`))]).toEqual([
        table,
        DENIED,
      ]);
    }
    expect(await outcome(asReader`update replica.orders set status = 'cancelled'`)).toBe(DENIED);
    expect(await outcome(asReader`truncate replica.changes`)).toBe(DENIED);
    expect(await outcome(asReader`create table replica.mine (id int)`)).toBe(DENIED);
    expect(await outcome(asReader`create view reporting.mine as select 1`)).toBe(DENIED);
    const [still] = await db.sql`select count(*)::int as n, min(status) as status from replica.orders`;
    expect(still).toEqual({ n: 1, status: "delivered" });
  });

  it("cannot read sync or use graphile_worker", async () => {
    expect(await outcome(asReader`select * from sync.events limit 1`)).toBe(DENIED);
    expect(await outcome(asReader`select * from sync.role_grants`)).toBe(DENIED);
    expect(await outcome(asReader`select graphile_worker.add_job('process_events', '{}')`)).toBe(DENIED);
    expect(await outcome(asReader`select * from graphile_worker.jobs`)).toBe(DENIED);
    expect(
      await outcome(asReader.unsafe(`select sync.apply_role_rights('${reader.name}'::regrole, 'consumer')`)),
    ).toBe(DENIED);
  });

  it("is a no-op when granted again, and --revoke takes every right back", async () => {
    const again = await runCli(
      ["grant", "reader", reader.name, "--json"],
      { DATABASE_URL: db.url },
      CLI_TIMEOUT_MS,
    );
    expect(again.code).toBe(0);
    expect(JSON.parse(again.stdout)).toEqual({
      role: reader.name,
      database: expect.stringMatching(/^loops_sync_test_/),
      previous: "reader",
      rights: "reader",
      schemas: ["replica", "reporting"],
      functions: ["replica.read_changes(bigint,integer,text[],text[])"],
    });
    const revoked = await runCli(
      ["grant", "--revoke", "reader", reader.name, "--json"],
      {
        DATABASE_URL: db.url,
      },
      CLI_TIMEOUT_MS,
    );
    expect(revoked.code).toBe(0);
    expect(JSON.parse(revoked.stdout)).toMatchObject({
      previous: "reader",
      rights: "none",
      schemas: [],
      functions: [],
    });
    expect(await outcome(asReader`select * from replica.orders limit 1`)).toBe(DENIED);
    expect(await outcome(asReader`select * from reporting.daily_sales limit 1`)).toBe(DENIED);
    expect(await outcome(asReader`select * from replica.read_changes(0, 1)`)).toBe(DENIED);
    const [row] = await db.sql`select count(*)::int as n from sync.role_grants`;
    expect(row!.n).toBe(0);
  });
});

describe("loops-sync grant refuses", { timeout: 180_000 }, () => {
  let db: TestDatabase;
  let reader: TestRole;
  let readsAll: TestRole;
  beforeAll(async () => {
    db = await createTestDatabase();
    reader = await createTestRole("ls_refused");
    // A DBA's or monitoring role: reads every table of every database, owns nothing.
    readsAll = await createTestRole("ls_reads_all", "in role pg_read_all_data");
  });
  afterAll(async () => {
    await db.drop();
    await reader.drop();
    await readsAll.drop();
  });

  it("exit 2 for a member of pg_read_all_data, which reads sync whatever we grant", async () => {
    const run = await runCli(["grant", "reader", readsAll.name], { DATABASE_URL: db.url }, CLI_TIMEOUT_MS);
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(new RegExp(`role "${readsAll.name}" is a member of pg_read_all_data, `));
  });

  it("exit 2 when DATABASE_URL's role does not own the mirror", async () => {
    const run = await runCli(
      ["grant", "reader", reader.name],
      { DATABASE_URL: readsAll.urlFor(db.url) },
      CLI_TIMEOUT_MS,
    );
    expect(run.code).toBe(2);
    expect(run.stderr.trim()).toMatch(
      new RegExp(
        `^loops-sync: grant: DATABASE_URL connects as role ${readsAll.name}, which does not own the mirror \\(\\w+ does\\); run grant with the DATABASE_URL that runs loops-sync migrate$`,
      ),
    );
  });

  it("exit 2 naming a role that does not exist", async () => {
    const run = await runCli(
      ["grant", "reader", "no_such_role_ls46"],
      { DATABASE_URL: db.url },
      CLI_TIMEOUT_MS,
    );
    expect(run.code).toBe(2);
    expect(run.stdout).toBe("");
    expect(run.stderr).toMatch(
      /^loops-sync: grant: role "no_such_role_ls46" does not exist .*create role no_such_role_ls46 login/,
    );
  });

  it("exit 2 for a superuser: its rights cannot be narrowed", async () => {
    const run = await runCli(["grant", "reader", "postgres"], { DATABASE_URL: db.url }, CLI_TIMEOUT_MS);
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/role "postgres" is a superuser, .*create a separate role/);
  });

  it("exit 2 naming the choices for an unknown kind of rights", async () => {
    const run = await runCli(["grant", "writer", reader.name], { DATABASE_URL: db.url }, CLI_TIMEOUT_MS);
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/'writer' is invalid .*reader, consumer/);
  });

  it("exit 2 when DATABASE_URL is a reader's own role", async () => {
    expect(
      (await runCli(["grant", "reader", reader.name], { DATABASE_URL: db.url }, CLI_TIMEOUT_MS)).code,
    ).toBe(0);
    const run = await runCli(
      ["grant", "consumer", reader.name],
      { DATABASE_URL: reader.urlFor(db.url) },
      CLI_TIMEOUT_MS,
    );
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(
      new RegExp(`DATABASE_URL connects as role ${reader.name}, which cannot read the sync schema`),
    );
  });
});
