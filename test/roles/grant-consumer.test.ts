import type { Sql } from "@loops-sync/db";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "../support/db.ts";
import { runCli } from "../support/operator-run.ts";
import { createTestRole, outcome, type TestRole } from "../support/test-role.ts";
import { orderChange, writeChanges } from "../support/write-changes.ts";

// A real process on a machine other tests load too: seconds each, so far more than runCli's 30 s default.
const CLI_TIMEOUT_MS = 120_000;

const DENIED = "42501";
const CONSUMER_FUNCTIONS = ["create_consumer", "drop_consumer", "receive_changes", "ack_changes"];

/** The feed consumer functions this database has, and whether the connected role may execute each. */
async function consumerFunctions(sql: Sql): Promise<Record<string, boolean>> {
  const rows = await sql<{ name: string; allowed: boolean }[]>`
    select p.oid::regprocedure::text as name, has_function_privilege(p.oid, 'EXECUTE') as allowed
      from pg_proc p where p.pronamespace = 'replica'::regnamespace and p.proname = any(${CONSUMER_FUNCTIONS})`;
  return Object.fromEntries(rows.map((r) => [r.name, r.allowed]));
}

describe("loops-sync grant consumer", { timeout: 180_000 }, () => {
  let db: TestDatabase;
  let consumer: TestRole;
  let reader: TestRole;
  let asConsumer: Sql;
  let asReader: Sql;

  beforeAll(async () => {
    db = await createTestDatabase();
    consumer = await createTestRole("ls_consumer");
    reader = await createTestRole("ls_reader");
    for (const [rights, role] of [
      ["consumer", consumer],
      ["reader", reader],
    ] as const) {
      const run = await runCli(["grant", rights, role.name], { DATABASE_URL: db.url }, CLI_TIMEOUT_MS);
      expect(run.stderr).toBe("");
      expect(run.code).toBe(0);
    }
    asConsumer = consumer.connect(db.url);
    asReader = reader.connect(db.url);
  }, 180_000);

  afterAll(async () => {
    await asConsumer?.end();
    await asReader?.end();
    await db.drop();
    await consumer.drop();
    await reader.drop();
  });

  it("executes every feed consumer function the database has; a reader executes none", async () => {
    const forConsumer = await consumerFunctions(asConsumer);
    expect(Object.keys(forConsumer).sort()).toEqual([
      "replica.ack_changes(text,bigint[])",
      "replica.create_consumer(text,text[],text[],bigint)",
      "replica.drop_consumer(text)",
      "replica.receive_changes(text,integer,integer)",
    ]);
    expect(Object.values(forConsumer).every(Boolean)).toBe(true);
    expect(Object.values(await consumerFunctions(asReader)).some(Boolean)).toBe(false);
  });

  it("lets the granted role create a consumer, receive and acknowledge through the real functions", async () => {
    expect(await asConsumer`select replica.create_consumer('granted_c', after => 0) as c`).toEqual([
      { c: true },
    ]);
    await writeChanges(db.sql, [orderChange("ord_granted", 1, "placed", null)]);
    const received = await asConsumer<{ position: string; resource_id: string }[]>`
      select position, resource_id from replica.receive_changes('granted_c', 10, 3600)`;
    expect(received.map((r) => r.resource_id)).toEqual(["ord_granted"]);
    const positions = received.map((r) => Number(r.position));
    expect(await outcome(asReader`select replica.receive_changes('granted_c')`)).toBe(DENIED);
    expect(await outcome(asReader`select replica.ack_changes('granted_c', ${positions}::bigint[])`)).toBe(
      DENIED,
    );
    expect(await asConsumer`select replica.ack_changes('granted_c', ${positions}::bigint[]) as n`).toEqual([
      { n: 1 },
    ]);
    // Acknowledged for good: nothing is handed out again.
    expect(await asConsumer`select * from replica.receive_changes('granted_c', 10, 1)`).toEqual([]);
  });

  it("has the reader's rights and nothing more", async () => {
    expect(await outcome(asConsumer`select * from replica.read_changes(0, 1)`)).toBe("ok");
    expect(await outcome(asConsumer`select * from reporting.sync_health`)).toBe("ok");
    expect(await outcome(asConsumer`insert into replica.changes default values`)).toBe(DENIED);
    expect(await outcome(asConsumer`delete from replica.changes`)).toBe(DENIED);
    expect(await outcome(asConsumer`update replica.change_feed_state set pruned_through = 0`)).toBe(DENIED);
    expect(await outcome(asConsumer`select * from sync.events`)).toBe(DENIED);
    expect(await outcome(asConsumer`select graphile_worker.add_job('process_events', '{}')`)).toBe(DENIED);
  });

  it("--revoke consumer leaves a reader", async () => {
    const run = await runCli(
      ["grant", "--revoke", "consumer", consumer.name, "--json"],
      {
        DATABASE_URL: db.url,
      },
      CLI_TIMEOUT_MS,
    );
    expect(run.code).toBe(0);
    expect(JSON.parse(run.stdout)).toMatchObject({
      previous: "consumer",
      rights: "reader",
      functions: ["replica.read_changes(bigint,integer,text[],text[])"],
    });
    expect(await outcome(asConsumer`select replica.ack_changes('granted_c', array[1]::bigint[])`)).toBe(
      DENIED,
    );
    expect(await outcome(asConsumer`select replica.receive_changes('granted_c')`)).toBe(DENIED);
    expect(await outcome(asConsumer`select * from replica.read_changes(0, 1)`)).toBe("ok");
  });
});
