import {
  DEFAULT_SANDBOX_CREDENTIALS,
  DEFAULT_WEBHOOK_SECRET,
  manyMerchantsSeed,
  type Sandbox,
  startSandbox,
} from "@loops-sync/sandbox";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loopsSyncEnv, ProcessGroup, receiverUrlOf } from "#testkit/processes";
import { waitFor } from "#testkit/wait-for";
import { createTestDatabase, type TestDatabase } from "../support/db.ts";

// A worker catching up at start and `loops-sync catchup` beside it: two processes, one budget. The sandbox
// counts what arrives; unbudgeted, these runs put hundreds of calls into the first second.
describe("two loops-sync processes under one LOOPS_MAX_RPS", () => {
  const procs = new ProcessGroup();
  let db: TestDatabase;
  let sandbox: Sandbox;
  const MAX_RPS = 30;
  beforeAll(async () => {
    db = await createTestDatabase();
    sandbox = await startSandbox({ seed: manyMerchantsSeed(25) });
    for (const merchantId of sandbox.merchantIds) sandbox.createOrder({ merchantId });
  });
  afterAll(async () => {
    await procs.killAll();
    await sandbox?.close();
    await db?.drop();
  }, 30_000);

  it("keeps every one-second window within the budget while both catch up, a webhook's order first", async () => {
    const env = loopsSyncEnv({
      databaseUrl: db.url,
      api: sandbox,
      credentials: DEFAULT_SANDBOX_CREDENTIALS,
      webhookSecrets: [DEFAULT_WEBHOOK_SECRET],
      extra: { LOOPS_MAX_RPS: String(MAX_RPS), LOOPS_MERCHANT_IDS: sandbox.merchantIds.join(",") },
    });
    const worker = procs.spawn({ name: "budget-worker", args: ["start"], env });
    sandbox.addWebhookEndpoint({
      url: `${await receiverUrlOf(worker)}/webhooks/loops`,
      secrets: [DEFAULT_WEBHOOK_SECRET],
    });
    const cli = procs.spawn({ name: "budget-catchup", args: ["catchup", "--json"], env });
    // While both catch up (the budget saturated), a webhook's order for the merchant caught up last goes first.
    await waitFor(async () => sandbox.stats().busiestSecond >= MAX_RPS / 2, { what: "catch-up under way" });
    const live = sandbox.createOrder({ merchantId: sandbox.merchantIds.at(-1)! });
    await waitFor(
      async () => (await db.sql`select 1 from replica.orders where id = ${live.id}`).length === 1,
      { what: "the webhook's order mirrored", timeoutMs: 30_000 },
    );
    const [tick] = await db.sql<{ finished: boolean }[]>`
      select finished_at is not null as finished from sync.scheduled_ticks where task = 'catchup'`;
    expect(tick?.finished ?? false).toBe(false);
    await worker.waitForLine(/"msg":"catch-up run finished"/, 120_000);
    expect((await cli.exited).code).toBe(0);
    const stats = sandbox.stats();
    const calls = Object.values(stats.apiCalls).reduce((a, b) => a + b, 0) + stats.tokenRequests;
    // Enough calls that the budget had to hold them back, and every order mirrored.
    expect(calls).toBeGreaterThan(3 * MAX_RPS);
    expect(stats.busiestSecond).toBeLessThanOrEqual(MAX_RPS);
    const [mirrored] = await db.sql<{ n: number }[]>`select count(*)::int as n from replica.orders`;
    expect(mirrored?.n).toBe(sandbox.merchantIds.length + 1);
  });
});
