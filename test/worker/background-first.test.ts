// Onboarding takes turns with routine work (issue 52): a merchant new to the sync gets its first reconcile
// ahead of the routine reconciles already waiting, and still behind event jobs. A real worker (one job at a
// time) against the sandbox over HTTP.
import { manyMerchantsSeed, type Sandbox, startSandbox } from "@loops-sync/sandbox";
import { type RunningWorker, startWorker } from "@loops-sync/worker";
import { FIRST_RUN_PRIORITY, paceBackground } from "@loops-sync/worker/reconcile/pace-background";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { waitFor } from "#testkit/wait-for";
import { createTestDatabase, type TestDatabase } from "../support/db.ts";
import { sandboxClient } from "../support/sandbox-client.ts";

let db: TestDatabase;
let sandbox: Sandbox;
let worker: RunningWorker | undefined;
beforeAll(async () => {
  db = await createTestDatabase();
  sandbox = await startSandbox({ port: 0, seed: manyMerchantsSeed(5) });
});
afterAll(async () => {
  await worker?.stop();
  await sandbox?.close();
  await db?.drop();
});

describe("a new merchant's first reconcile", () => {
  it("runs before the routine reconciles queued earlier", { timeout: 60_000 }, async () => {
    const [fresh, ...routine] = sandbox.merchantIds as [string, ...string[]];
    await db.sql`
      insert into sync.merchants (id, learned_from, status, reconciled_at, reconcile_calls)
      select id, 'config', 'active', now() - interval '2 hours', 7 from unnest(${routine}::text[]) id`;
    const pace = () =>
      paceBackground({ sql: db.sql }, { cron: "*/15 * * * *", maxRps: 25, share: 0.5, maxJobs: 10 });
    expect((await pace()).queued.sort()).toEqual([...routine].sort());
    // The new merchant joins once the routine reconciles wait in the queue.
    await db.sql`insert into sync.merchants (id, learned_from, status) values (${fresh}, 'config', 'active')`;
    expect((await pace()).queued).toEqual([fresh]);
    const [job] = await db.sql<{ priority: number }[]>`
      select priority from graphile_worker.jobs where key = ${`reconcile:${fresh}`}`;
    expect(job?.priority).toBe(FIRST_RUN_PRIORITY);

    // One job at a time, no trickle of its own: the queue's order decides.
    worker = await startWorker({
      databaseUrl: db.url,
      sql: db.sql,
      client: sandboxClient(sandbox),
      merchantIds: [],
      concurrency: 1,
      pollIntervalMs: 200,
      refreshResourcesAtStart: false,
    });
    const runs = await waitFor(
      async () => {
        const rows = await db.sql<{ id: string; reconciled_at: Date }[]>`
          select id, reconciled_at from sync.merchants
          where reconciled_at > now() - interval '1 hour' order by reconciled_at`;
        return rows.length === 5 ? rows : undefined;
      },
      { what: "every merchant reconciled", timeoutMs: 45_000 },
    );
    expect(runs?.[0]?.id).toBe(fresh);
  });
});
