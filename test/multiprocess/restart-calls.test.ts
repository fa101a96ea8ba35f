import {
  DEFAULT_SANDBOX_CREDENTIALS,
  DEFAULT_WEBHOOK_SECRET,
  manyMerchantsSeed,
  type Sandbox,
  startSandbox,
} from "@loops-sync/sandbox";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loopsSyncEnv, ProcessGroup } from "#testkit/processes";
import { waitFor } from "#testkit/wait-for";
import { createTestDatabase, type TestDatabase } from "../support/db.ts";

// A start is not a reason to call Loops (issue 52): each merchant's last complete catch-up and reconcile are
// kept in Postgres, and a `loops-sync worker` that starts calls only for merchants whose runs are missing or
// older than their interval. The sandbox counts every request that arrives.
describe("a worker process restarted", () => {
  const procs = new ProcessGroup();
  let db: TestDatabase;
  let sandbox: Sandbox;
  let env: Record<string, string>;
  const MERCHANTS = 4;
  const total = () => {
    const s = sandbox.stats();
    return Object.values(s.apiCalls).reduce((a, b) => a + b, 0) + s.tokenRequests;
  };
  const calls = (route: string) => sandbox.stats().apiCalls[route] ?? 0;
  const startWorker = async (name: string) => {
    const worker = procs.spawn({ name, args: ["worker"], env });
    await worker.waitForLine(/"msg":"worker started"/, 60_000);
    return worker;
  };
  const settled = async () => {
    const [row] = await db.sql<{ reconciled: number; caught_up: number; jobs: number }[]>`
      select (select count(*)::int from sync.merchants where reconciled_at > now() - interval '10 minutes') as reconciled,
             (select count(*)::int from sync.cursors
               where last_run_status = 'ok' and last_run_finished_at > now() - interval '10 minutes') as caught_up,
             (select count(*)::int from graphile_worker.jobs) as jobs`;
    return row!.reconciled === MERCHANTS && row!.caught_up === MERCHANTS && row!.jobs === 0;
  };

  beforeAll(async () => {
    db = await createTestDatabase();
    sandbox = await startSandbox({ seed: manyMerchantsSeed(MERCHANTS) });
    env = loopsSyncEnv({
      databaseUrl: db.url,
      api: sandbox,
      credentials: DEFAULT_SANDBOX_CREDENTIALS,
      webhookSecrets: [DEFAULT_WEBHOOK_SECRET],
      extra: {
        LOOPS_MERCHANT_IDS: sandbox.merchantIds.join(","),
        RECONCILE_CRON: "*/15 * * * *",
        CATCHUP_CRON: "*/30 * * * *",
      },
    });
  });
  afterAll(async () => {
    await procs.killAll();
    await sandbox?.close();
    await db?.drop();
  }, 30_000);

  it("backfills, catches up and reconciles new merchants at once", async () => {
    const first = await startWorker("restart-first");
    await waitFor(settled, { what: "every merchant caught up and reconciled", timeoutMs: 60_000 });
    expect(calls("GET /connection")).toBeGreaterThanOrEqual(MERCHANTS);
    expect(calls("GET /events")).toBeGreaterThanOrEqual(MERCHANTS);
    expect(calls("GET /orders")).toBeGreaterThanOrEqual(MERCHANTS);
    await first.kill("SIGTERM");
  }, 90_000);

  it("makes no call to Loops when every merchant's runs are recent", async () => {
    sandbox.resetStats();
    const second = await startWorker("restart-recent");
    // Several steps of the trickle (one a second) and the start's catch-up job have had their chance.
    await new Promise((r) => setTimeout(r, 4000));
    await waitFor(async () => (await db.sql`select 1 from graphile_worker.jobs`).length === 0, {
      what: "the start's jobs done",
    });
    expect(sandbox.stats().apiCalls).toEqual({});
    expect(total()).toBe(0);
    await second.kill("SIGTERM");
  }, 90_000);

  it("calls only for the merchants whose runs are stale", async () => {
    const [staleReconcile, staleCatchup] = sandbox.merchantIds;
    await db.sql`update sync.merchants set reconciled_at = now() - interval '2 hours' where id = ${staleReconcile!}`;
    await db.sql`
      update sync.cursors set last_run_finished_at = now() - interval '2 hours' where merchant_id = ${staleCatchup!}`;
    sandbox.resetStats();
    const third = await startWorker("restart-stale");
    await waitFor(settled, { what: "the stale merchants run again", timeoutMs: 60_000 });
    await new Promise((r) => setTimeout(r, 2000));
    // One reconcile (its GET /connection) and one catch-up (its GET /events page): not one per merchant.
    expect(calls("GET /connection")).toBe(1);
    expect(calls("GET /events")).toBe(1);
    await third.kill("SIGTERM");
  }, 90_000);
});
