// A merchant paused by a 429 (sync.merchants.paused_until): the scheduled catch-up skips it until the next
// run; the operator's command waits the pause out and catches it up, so nothing is silently left behind.

import { runCatchup } from "@loops-sync/catchup";
import type { LoopsClient } from "@loops-sync/loops-client";
import { type Sandbox, startSandbox } from "@loops-sync/sandbox";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "../support/db.ts";
import { makeOrders, sandboxClient } from "../support/sandbox-orders.ts";

describe("catch-up of a merchant paused by a 429", () => {
  let db: TestDatabase;
  let sandbox: Sandbox;
  let client: LoopsClient;
  const merchant = "mer_demo_2";

  beforeAll(async () => {
    db = await createTestDatabase();
    sandbox = await startSandbox({ port: 0 });
    client = sandboxClient(sandbox);
    const applicationId = sandbox.credentials.applicationId;
    const first = await runCatchup({ sql: db.sql, client, applicationId, merchantId: merchant });
    expect(first.merchants[0]?.status).toBe("ok");
    makeOrders(sandbox, merchant, 5);
  });

  afterAll(async () => {
    await sandbox?.close();
    await db?.drop();
  });

  const pause = (ms: number) =>
    db.sql`
      insert into sync.merchants (id, learned_from, paused_until)
      values (${merchant}, 'cli', now() + ${`${ms} milliseconds`}::interval)
      on conflict (id) do update set paused_until = excluded.paused_until`;
  const stored = async () =>
    (
      await db.sql<
        { n: number }[]
      >`select count(*)::int as n from sync.events where merchant_id = ${merchant}`
    )[0]!.n;

  it("is skipped by default (the scheduled task: the next run catches it up) and makes no call", async () => {
    await pause(60_000);
    client.resetStats();
    const result = await runCatchup({ sql: db.sql, client, applicationId: undefined, merchantId: merchant });
    expect(result.merchants[0]?.status).toBe("skipped_paused");
    expect(client.stats.requests).toBe(0);
    expect(await stored()).toBe(0);
  });

  it("is waited for with waitWhenPaused (the operator's command), then caught up", async () => {
    await pause(700);
    const started = Date.now();
    const result = await runCatchup({
      sql: db.sql,
      client,
      applicationId: undefined,
      merchantId: merchant,
      waitWhenPaused: true,
    });
    expect(result.merchants[0]?.status).toBe("ok");
    expect(Date.now() - started).toBeGreaterThanOrEqual(600);
    expect(await stored()).toBe(sandbox.truth.events(merchant).length);
  });
});
