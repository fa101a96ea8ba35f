// The operator commands end to end: `loops-sync` spawned against a real Postgres and the sandbox over HTTP.
import { PROCESS_EVENTS_MAX_ATTEMPTS } from "@loops-sync/db";
import { type Sandbox, startSandbox } from "@loops-sync/sandbox";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loopsApiEnv } from "#testkit/processes";
import { createTestDatabase, type TestDatabase } from "../support/db.ts";
import { runCli } from "../support/operator-run.ts";
import { enqueuedEventCounts, makeOrders, replicaOrders, truthOrders } from "../support/sandbox-orders.ts";

describe("loops-sync operator commands", () => {
  let db: TestDatabase;
  let sandbox: Sandbox;
  let env: Record<string, string>;
  const merchant = "mer_demo_1";

  beforeAll(async () => {
    db = await createTestDatabase();
    sandbox = await startSandbox({ port: 0 });
    makeOrders(sandbox, merchant, 20);
    makeOrders(sandbox, "mer_demo_2", 5);
    env = {
      DATABASE_URL: db.url,
      LOOPS_SYNC_MIGRATE_ON_START: "false",
      ...loopsApiEnv(sandbox),
    };
  });

  afterAll(async () => {
    await sandbox?.close();
    await db?.drop();
  });

  it("catchup mirrors the merchant and prints a plain summary with calls per event", async () => {
    const r = await runCli(["catchup", "--merchant", merchant], env);
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^catchup mer_demo_1: ok; \d+ events read, \d+ new;/m);
    expect(r.stdout).toMatch(/calls per new event/);
    expect(r.stdout).not.toContain(sandbox.credentials.clientSecret);
    expect(await replicaOrders(db.sql, merchant)).toEqual(truthOrders(sandbox, merchant));
  });

  it("status --json prints the snapshot with the merchant's cursor", async () => {
    const r = await runCli(["status", "--json"], env);
    expect(r.code).toBe(0);
    const status = JSON.parse(r.stdout) as {
      merchants: { merchantId: string; cursor: { afterEventId: string } }[];
    };
    const m = status.merchants.find((x) => x.merchantId === merchant);
    expect(m?.cursor.afterEventId).toBe(sandbox.truth.events(merchant).at(-1)!.id);
  });

  it("verify exits 1 listing a planted difference; verify --repair fixes it and exits 0", async () => {
    const [order] = truthOrders(sandbox, merchant);
    await db.sql`update replica.orders set status = 'rejected' where id = ${order!.id}`;
    const found = await runCli(["verify", "--merchant", merchant], env);
    expect(found.code).toBe(1);
    expect(found.stdout).toContain(
      `${merchant} ${order!.id} status_mismatch: replica v${order!.version} rejected`,
    );
    expect(found.stderr).toMatch(/verify: 1 difference\(s\); run with --repair to fix them/);

    const repaired = await runCli(["verify", "--merchant", merchant, "--repair"], env);
    expect(repaired.code).toBe(0);
    expect(repaired.stdout).toMatch(/1 difference\(s\), 1 repaired/);
    expect(await replicaOrders(db.sql, merchant)).toEqual(truthOrders(sandbox, merchant));
  });

  it("replay puts a stored event back to pending with a process_events job; an unknown one exits 1", async () => {
    const [event] = await db.sql<
      { id: string }[]
    >`select id from sync.events where merchant_id = ${merchant} limit 1`;
    const jobsBefore = (await enqueuedEventCounts(db.sql)).get(event!.id) ?? 0;
    const r = await runCli(["replay", event!.id], env);
    expect(r.code).toBe(0);
    expect((await enqueuedEventCounts(db.sql)).get(event!.id)).toBe(jobsBefore + 1);
    const attempts = await db.sql<{ max_attempts: number }[]>`
      select j.max_attempts from graphile_worker._private_jobs j
      join graphile_worker._private_tasks t on t.id = j.task_id
      where t.identifier = 'process_events' and j.payload::jsonb -> 'eventIds' ? ${event!.id}`;
    expect(new Set(attempts.map((j) => j.max_attempts))).toEqual(new Set([PROCESS_EVENTS_MAX_ATTEMPTS]));
    expect(r.stdout).toMatch(new RegExp(`replay: ${event!.id} .* queued for the worker`));
    const [row] = await db.sql<
      { outcome: string }[]
    >`select outcome from sync.events where id = ${event!.id}`;
    expect(row?.outcome).toBe("pending");

    const unknown = await runCli(["replay", "evt_never_seen"], env);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toMatch(/event evt_never_seen is not in sync\.events/);
  });

  it("redeliver asks Loops once; without a stored event it needs --merchant", async () => {
    const eventId = sandbox.truth.events(merchant)[0]!.id;
    sandbox.resetStats();
    const r = await runCli(["redeliver", eventId], env);
    expect(r.code).toBe(0);
    expect(sandbox.stats().apiCalls["POST /events/{event_id}/redeliver"]).toBe(1);

    const missing = await runCli(["redeliver", "evt_not_stored"], env);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/pass --merchant mer_… to name it/);
  });

  it("backfill --merchant copies the orders and prints the next watermark", async () => {
    const r = await runCli(["backfill", "--merchant", "mer_demo_2"], env);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(
      /^backfill mer_demo_2: 1 page\(s\), 5 orders listed since the beginning, 5 changed;/,
    );
    expect(await replicaOrders(db.sql, "mer_demo_2")).toEqual(truthOrders(sandbox, "mer_demo_2"));
  });
});
