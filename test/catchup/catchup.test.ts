// Catch-up from GET /events against the sandbox over real HTTP and a real Postgres: an outage of the
// receiver (no webhook reaches us) while 200 orders live their lifecycles, then catch-up.
import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { readEventCursor, runCatchup } from "@loops-sync/catchup";
import type { LoopsClient } from "@loops-sync/loops-client";
import { type Sandbox, startSandbox } from "@loops-sync/sandbox";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { waitFor } from "#testkit/wait-for";
import { createTestDatabase, type TestDatabase } from "../support/db.ts";
import {
  enqueuedEventCounts,
  expectReplicaEqualsTruth,
  makeOrders,
  sandboxClient,
} from "../support/sandbox-orders.ts";

const CHILD = fileURLToPath(new URL("../support/catchup-child.ts", import.meta.url));

describe("catch-up from the event log", () => {
  let db: TestDatabase;
  let sandbox: Sandbox;
  let client: LoopsClient;
  let applicationId: string;
  const merchant = "mer_demo_1";

  beforeAll(async () => {
    db = await createTestDatabase();
    sandbox = await startSandbox({ port: 0 });
    client = sandboxClient(sandbox);
    applicationId = sandbox.credentials.applicationId;
  });

  afterAll(async () => {
    await sandbox?.close();
    await db?.drop();
  });

  it("after a receiver outage of 200 orders, one catch-up makes the replica equal the sandbox's truth", async () => {
    // Sync once before the outage: the merchant is known and its cursor exists.
    const first = await runCatchup({ sql: db.sql, client, applicationId, merchantId: merchant });
    expect(first.merchants[0]?.error).toBeUndefined();
    expect(first.merchants[0]?.status).toBe("ok");

    makeOrders(sandbox, merchant, 200);
    const events = sandbox.truth.events(merchant);
    expect(events.length).toBeGreaterThan(400);

    client.resetStats();
    const result = await runCatchup({ sql: db.sql, client, applicationId, merchantId: merchant });
    const run = result.merchants[0]!;
    expect(run.status).toBe("ok");
    expect(run.eventsStored).toBe(events.length);
    await expectReplicaEqualsTruth(db.sql, sandbox, merchant);

    // Few calls: the orders came from list pages, not one GET /orders/{id} each, and every order event
    // was settled in the transaction that stored it, so the worker has nothing left to fetch.
    const calls = client.stats.byEndpoint;
    expect(calls["GET /orders/{order_id}"] ?? 0).toBe(0);
    expect(calls["GET /orders"]).toBeLessThanOrEqual(4);
    const [open] = await db.sql<{ n: number }[]>`
      select count(*)::int as n from sync.events where merchant_id = ${merchant} and outcome = 'pending'`;
    expect(open?.n).toBe(0);
    console.info(
      `catch-up of ${events.length} events: ${result.apiCalls} API calls (${calls["GET /events"]} event pages, ` +
        `${calls["GET /orders"]} order pages), ${result.callsPerStoredEvent?.toFixed(3)} calls per event`,
    );
  });

  it("keeps its cursor: a second run reads only the events made since", async () => {
    const before = await readEventCursor(db.sql, merchant);
    const known = sandbox.truth.events(merchant).length;
    makeOrders(sandbox, merchant, 3);
    const all = sandbox.truth.events(merchant);
    const fresh = all.slice(known);
    expect(before?.afterEventId).toBe(all[known - 1]!.id);

    client.resetStats();
    const result = await runCatchup({ sql: db.sql, client, applicationId, merchantId: merchant });
    expect(result.eventsRead).toBe(fresh.length);
    expect(result.eventsStored).toBe(fresh.length);
    expect(client.stats.byEndpoint["GET /events"]).toBe(1);
    const after = await readEventCursor(db.sql, merchant);
    expect(after?.afterEventId).toBe(all.at(-1)!.id);
    expect(after?.eventsStored).toBe(all.length);
    await expectReplicaEqualsTruth(db.sql, sandbox, merchant);
  });

  it("survives kill -9 mid-run: the rerun resumes at the cursor and every event is stored and enqueued once", async () => {
    const other = "mer_demo_2";
    makeOrders(sandbox, other, 60);
    const events = sandbox.truth.events(other);
    // Slow answers keep the child busy long enough to be killed between pages.
    sandbox.setFaults({ apiSlowRate: 1, apiSlowMs: 40 });
    const child = spawn(
      process.execPath,
      [CHILD, db.url, sandbox.apiUrl, sandbox.authUrl, sandbox.credentials.clientId, other, applicationId],
      { env: { ...process.env, CHILD_CLIENT_SECRET: sandbox.credentials.clientSecret }, stdio: "pipe" },
    );
    const exited = new Promise<NodeJS.Signals | null>((resolve) =>
      child.once("exit", (_code, signal) => resolve(signal)),
    );
    try {
      await waitFor(
        async () => {
          const [row] = await db.sql<
            { n: string }[]
          >`select events_stored as n from sync.cursors where merchant_id = ${other}`;
          return row && Number(row.n) >= 10;
        },
        { what: "the child to store a few pages", timeoutMs: 20_000 },
      );
    } finally {
      child.kill("SIGKILL");
    }
    expect(await exited).toBe("SIGKILL");
    sandbox.setFaults({ apiSlowRate: 0 });

    const partial = await readEventCursor(db.sql, other);
    expect(partial!.eventsStored).toBeGreaterThan(0);
    expect(partial!.eventsStored).toBeLessThan(events.length);

    const rerun = await runCatchup({ sql: db.sql, client, applicationId, merchantId: other });
    expect(rerun.merchants[0]?.status).toBe("ok");
    // The rerun started after the killed run's last committed page: it stored exactly the rest.
    expect(rerun.eventsStored).toBe(events.length - partial!.eventsStored);
    await expectReplicaEqualsTruth(db.sql, sandbox, other);

    const stored = await db.sql<{ id: string }[]>`select id from sync.events where merchant_id = ${other}`;
    expect(stored.map((r) => r.id).sort()).toEqual(events.map((e) => e.id).sort());
    const enqueued = await enqueuedEventCounts(db.sql);
    for (const e of events) expect(enqueued.get(e.id) ?? 0).toBeLessThanOrEqual(1);
    const [open] = await db.sql<{ n: number }[]>`
      select count(*)::int as n from sync.events where merchant_id = ${other} and outcome = 'pending'`;
    expect(open?.n).toBe(0);
  });
});
