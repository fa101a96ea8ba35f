// `loops-sync replay --failed`: events that failed for a cause since gone (here: orders the API answered
// 404 for while they were still propagating) are put back in bulk, in small transactions, and a real worker
// then mirrors their orders; --dry-run changes nothing; the filters take only what they name.

import { replayFailedEvents } from "@loops-sync/cli/replay-failed-events";
import { type EventEnvelope, PROCESS_EVENTS_MAX_ATTEMPTS, storeEventsAndEnqueue } from "@loops-sync/db";
import { type Sandbox, startSandbox } from "@loops-sync/sandbox";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { compareReplicaWithTruth } from "#testkit/compare-replica";
import { loopsApiEnv, ProcessGroup } from "#testkit/processes";
import { waitFor } from "#testkit/wait-for";
import { createTestDatabase, type TestDatabase } from "../support/db.ts";
import { runCli } from "../support/operator-run.ts";

describe("replay --failed", () => {
  const procs = new ProcessGroup();
  let db: TestDatabase;
  let sandbox: Sandbox;
  let env: Record<string, string>;
  const [m1, m2] = ["mer_demo_1", "mer_demo_2"];
  const outcomes = async (merchantId: string) =>
    Object.fromEntries(
      (
        await db.sql<{ outcome: string; n: number }[]>`
          select outcome, count(*)::int as n from sync.events where merchant_id = ${merchantId} group by 1`
      ).map((r) => [r.outcome, r.n]),
    );

  beforeAll(async () => {
    db = await createTestDatabase();
    sandbox = await startSandbox({ port: 0 });
    env = { DATABASE_URL: db.url, ...loopsApiEnv(sandbox) };
    // Each merchant's orders, their events stored and failed as a 404 during propagation leaves them.
    for (const merchantId of [m1, m2]) {
      for (let i = 0; i < 3; i++) sandbox.advanceOrder(sandbox.createOrder({ merchantId }).id);
      // As they come over the wire.
      const events = JSON.parse(
        JSON.stringify(sandbox.truth.events(merchantId).filter((e) => e.type.startsWith("order."))),
      ) as EventEnvelope[];
      await storeEventsAndEnqueue(db.sql, events, { source: "webhook", applicationId: undefined });
    }
    await db.sql`update sync.events set outcome = 'failed', outcome_at = now(), error = 'Loops GET /orders/{id} failed with 404 not_found'`;
    await db.sql`delete from graphile_worker._private_jobs`;
    // Long since confirmed by GET /connection (whose confirm_merchant job went with the rest).
    await db.sql`update sync.merchants set status = 'active'`;
  });
  afterAll(async () => {
    await procs.killAll();
    await sandbox?.close();
    await db?.drop();
  });

  it("--dry-run lists what the filters take and changes nothing", async () => {
    const before = await outcomes(m1);
    const r = await runCli(["replay", "--failed", "--merchant", m1, "--dry-run", "--json"], env);
    expect(r.code).toBe(0);
    const listed = JSON.parse(r.stdout) as {
      dryRun: boolean;
      matched: number;
      events: { merchantId: string }[];
    };
    expect(listed).toMatchObject({ dryRun: true, matched: before.failed });
    expect(new Set(listed.events.map((e) => e.merchantId))).toEqual(new Set([m1]));
    expect(await outcomes(m1)).toEqual(before);
    expect(
      (await db.sql<{ n: number }[]>`select count(*)::int as n from graphile_worker._private_jobs`)[0]!.n,
    ).toBe(0);

    const since = new Date(Date.now() + 60_000).toISOString();
    const none = await runCli(["replay", "--failed", "--since", since, "--dry-run", "--json"], env);
    expect(JSON.parse(none.stdout)).toMatchObject({ matched: 0 });
    const created = await runCli(
      ["replay", "--failed", "--type", "order.created", "--dry-run", "--json"],
      env,
    );
    const types = (JSON.parse(created.stdout) as { events: { type: string }[] }).events.map((e) => e.type);
    // Three orders for each of the two merchants.
    expect(types).toEqual(Array(6).fill("order.created"));
  });

  it("puts one merchant's failed events back, and a worker mirrors their orders", {
    timeout: 60_000,
  }, async () => {
    const failed = (await outcomes(m1)).failed!;
    const r = await runCli(["replay", "--failed", "--merchant", m1, "--type", "order.*", "--json"], env);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ dryRun: false, replayed: failed, batches: 1 });
    expect(await outcomes(m2)).toEqual({ failed: expect.any(Number) });
    const [job] = await db.sql<{ max_attempts: number }[]>`
      select max_attempts from graphile_worker.jobs where task_identifier = 'process_events'`;
    expect(job!.max_attempts).toBe(PROCESS_EVENTS_MAX_ATTEMPTS);

    procs.spawn({
      name: "replay-failed-worker",
      args: ["worker"],
      env: { ...env, ADMIN_PORT: "0", LOG_LEVEL: "info" },
    });
    await waitFor(
      async () => (await outcomes(m1)).pending === undefined && (await outcomes(m1)).failed === undefined,
      {
        timeoutMs: 30_000,
        what: `${m1}'s events settled`,
      },
    );
    expect(await compareReplicaWithTruth(db.sql, sandbox.truth.orders(m1), { exhaustive: false })).toEqual(
      [],
    );
    expect(Object.keys(await outcomes(m2))).toEqual(["failed"]);
  });

  it("works in small transactions, each moving on from the last", async () => {
    const failed = (await outcomes(m2)).failed!;
    const seen: number[] = [];
    const result = await replayFailedEvents(
      db.sql,
      { merchantId: m2 },
      {
        batchSize: 2,
        onBatch: (p) => seen.push(p.replayed),
      },
    );
    expect(result.replayed).toBe(failed);
    expect(result.batches).toBe(Math.ceil(failed / 2));
    expect(seen.at(-1)).toBe(failed);
    expect((await outcomes(m2)).failed).toBeUndefined();
  });
});
