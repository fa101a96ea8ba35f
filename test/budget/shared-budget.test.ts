import { connect, readRequestBudget, requestBudget, type Sql } from "@loops-sync/db";
import { LoopsClient, SharedBudgetGate } from "@loops-sync/loops-client";
import { manyMerchantsSeed, type Sandbox, startSandbox } from "@loops-sync/sandbox";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "../support/db.ts";

// Each "process" is a client with its own Postgres pool and its own gate: all they share is the database.
interface Process {
  client: LoopsClient;
  gate: SharedBudgetGate;
  pool: Sql;
}

let db: TestDatabase;
let sandbox: Sandbox;
const pools: Sql[] = [];

beforeAll(async () => {
  db = await createTestDatabase();
  sandbox = await startSandbox({ seed: manyMerchantsSeed(30) });
});
// Each test's "processes" end with it.
afterEach(async () => {
  await Promise.all(pools.splice(0).map((p) => p.end({ timeout: 5 })));
});
afterAll(async () => {
  await sandbox?.close();
  await db?.drop();
});

function startProcess(maxRps: number, { waitOn429 = true } = {}): Process {
  const pool = connect(db.url, { max: 2, applicationName: "budget-test" });
  pools.push(pool);
  const budget = requestBudget(pool, { maxRps });
  const gate = new SharedBudgetGate({
    take: budget.take,
    narrow: budget.narrow,
    maxBatch: Math.ceil(maxRps / 10),
  });
  const client = new LoopsClient({
    apiUrl: sandbox.apiUrl,
    authUrl: sandbox.authUrl,
    clientId: sandbox.credentials.clientId,
    clientSecret: sandbox.credentials.clientSecret,
    gate,
    // As the worker's client: a 429 is thrown at once instead of slept on.
    ...(waitOn429 ? {} : { retry: { maxRetryAfterSeconds: 0 } }),
  });
  return { client, gate, pool };
}

/** `count` background calls spread over the seeded merchants. */
function backgroundCalls(p: Process, count: number, done: { n: number }): Promise<unknown>[] {
  return Array.from({ length: count }, (_, i) =>
    p.client
      .forMerchant(sandbox.merchantIds[i % sandbox.merchantIds.length]!)
      .connection.get()
      .then(() => done.n++),
  );
}

describe("one request budget shared through Postgres", () => {
  it("keeps three processes together within LOOPS_MAX_RPS in every one-second window the upstream counts", async () => {
    sandbox.resetStats();
    const maxRps = 40;
    const processes = [startProcess(maxRps), startProcess(maxRps), startProcess(maxRps)];
    const done = { n: 0 };
    // 3 × 50 calls at once: unbudgeted they all land within a fraction of a second.
    await Promise.all(processes.flatMap((p) => backgroundCalls(p, 50, done)));
    const stats = sandbox.stats();
    expect(done.n).toBe(150);
    expect(Object.values(stats.apiCalls).reduce((a, b) => a + b, 0)).toBe(150);
    expect(stats.tokenRequests).toBe(3);
    expect(stats.busiestSecond).toBeGreaterThan(0);
    expect(stats.busiestSecond).toBeLessThanOrEqual(maxRps);
  });

  it("sends a live call of the same process ahead of its saturating background backlog", async () => {
    const p = startProcess(30);
    await p.client.forMerchant(sandbox.merchantIds[0]!).connection.get(); // the token, out of the way
    const done = { n: 0 };
    const backlog = backgroundCalls(p, 80, done);
    await new Promise((resolve) => setImmediate(resolve));
    expect(p.gate.waiting.background).toBeGreaterThan(40);
    await p.client.forMerchant(sandbox.merchantIds[1]!, { priority: "live" }).connection.get();
    // FIFO would have sent all 80 first.
    expect(done.n).toBeLessThan(40);
    await Promise.all(backlog);
    expect(done.n).toBe(80);
  });

  it("keeps a share for a live call of another process while background work saturates the budget", async () => {
    const busy = startProcess(30);
    const other = startProcess(30);
    await other.client.forMerchant(sandbox.merchantIds[0]!).connection.get();
    const done = { n: 0 };
    const backlog = backgroundCalls(busy, 80, done);
    // Wait until the background work has filled its share of the window.
    while (done.n < 30) await new Promise((resolve) => setTimeout(resolve, 20));
    await other.client.forMerchant(sandbox.merchantIds[2]!, { priority: "live" }).connection.get();
    expect(done.n).toBeLessThan(60);
    await Promise.all(backlog);
  });

  it("takes turns between merchants, so one merchant's backlog does not hold back another's call", async () => {
    const p = startProcess(30);
    await p.client.forMerchant(sandbox.merchantIds[0]!).connection.get();
    let bigDone = 0;
    const big = Array.from({ length: 60 }, () =>
      p.client
        .forMerchant(sandbox.merchantIds[3]!)
        .connection.get()
        .then(() => bigDone++),
    );
    await new Promise((resolve) => setImmediate(resolve));
    await p.client.forMerchant(sandbox.merchantIds[4]!).connection.get();
    // Queued behind all 60 calls of the big merchant, it would come last.
    expect(bigDone).toBeLessThan(30);
    await Promise.all(big);
  });

  it("halves the shared rate after a 429 until its Retry-After has passed", async () => {
    const p = startProcess(40, { waitOn429: false });
    sandbox.setFaults({ api429Rate: 1, api429RetryAfterSeconds: 30 });
    try {
      await expect(p.client.forMerchant(sandbox.merchantIds[0]!).connection.get()).rejects.toMatchObject({
        status: 429,
      });
      // Telling the budget does not hold up the caller; it lands a moment later.
      while ((await readRequestBudget(p.pool, { maxRps: 40 })).narrowedUntil === null) {
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
    } finally {
      sandbox.setFaults({ api429Rate: 0 });
    }
    const state = await readRequestBudget(p.pool, { maxRps: 40 });
    expect(state.rateInForce).toBe(20);
    expect(state.narrowedUntil?.getTime()).toBeGreaterThan(Date.now() + 20_000);
    await db.sql`update sync.request_budget set narrowed_until = null`;
  });
});
