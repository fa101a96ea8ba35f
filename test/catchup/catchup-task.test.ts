// The `catchup` graphile-worker task inside the real worker: scheduled once at start, it catches up, and the
// worker then applies what the list refresh did not cover.

import { catchupCrontab } from "@loops-sync/catchup";
import { type Sandbox, startSandbox } from "@loops-sync/sandbox";
import { type RunningWorker, startWorker } from "@loops-sync/worker";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { waitFor } from "#testkit/wait-for";
import { createTestDatabase, type TestDatabase } from "../support/db.ts";
import { makeOrders, replicaOrders, sandboxClient, truthOrders } from "../support/sandbox-orders.ts";

describe("catchup task in the worker", () => {
  let db: TestDatabase;
  let sandbox: Sandbox;
  let worker: RunningWorker | undefined;

  beforeAll(async () => {
    db = await createTestDatabase();
    sandbox = await startSandbox({ port: 0 });
  });

  afterAll(async () => {
    await worker?.stop();
    await sandbox?.close();
    await db?.drop();
  });

  it("rejects a malformed CATCHUP_CRON and builds a keyed crontab line", () => {
    expect(() => catchupCrontab("every 5 minutes")).toThrow(/CATCHUP_CRON: expected 5 cron fields/);
    expect(catchupCrontab("*/2 * * * *")).toBe(
      "*/2 * * * * catchup ?jobKey=catchup&jobKeyMode=preserve_run_at&max=3&queue=catchup_ticks",
    );
  });

  it("runs at start for every configured merchant and leaves the replica equal to the sandbox", async () => {
    const merchants = ["mer_demo_1", "mer_demo_2"];
    makeOrders(sandbox, "mer_demo_1", 12);
    makeOrders(sandbox, "mer_demo_2", 1);
    const client = sandboxClient(sandbox);
    const applicationId = sandbox.credentials.applicationId;
    worker = await startWorker({
      databaseUrl: db.url,
      sql: db.sql,
      client,
      applicationId,
      merchantIds: merchants,
      concurrency: 2,
      pollIntervalMs: 200,
      catchup: { client, cron: "*/5 * * * *" },
    });
    // startWorker queues the run at start itself (the `catchup` option).
    await waitFor(
      async () => {
        const rows = await db.sql<{ last_run_status: string }[]>`
          select last_run_status from sync.cursors where last_run_status = 'ok'`;
        return rows.length === merchants.length;
      },
      { what: "both merchants caught up", timeoutMs: 20_000 },
    ).catch(async (error: unknown) => {
      // Say why: each cursor's last run and the queue's errors.
      const cursors = await db.sql`select merchant_id, last_run_status, last_run_error from sync.cursors`;
      const jobs = await db.sql`select task_identifier, attempts, last_error from graphile_worker.jobs`;
      const activity = await db.sql`
        select state, wait_event_type, wait_event, left(query, 100) as query from pg_stat_activity
        where datname = current_database() and pid <> pg_backend_pid()`;
      throw new Error(`${(error as Error).message}: ${JSON.stringify({ cursors, jobs, activity })}`);
    });
    for (const m of merchants) {
      await waitFor(
        async () =>
          JSON.stringify(await replicaOrders(db.sql, m)) === JSON.stringify(truthOrders(sandbox, m)),
        { what: `the replica of ${m} to equal the sandbox` },
      );
    }
    const [open] = await db.sql<
      { n: number }[]
    >`select count(*)::int as n from sync.events where outcome = 'pending'`;
    expect(open?.n).toBe(0);
    // The run at start is a tick over every merchant: recorded with its deadline, the next cron tick. (A second
    // run queued behind it may have started over the row: wait for the one that is running to end.)
    const tick = await waitFor(
      async () => {
        const [row] = await db.sql<
          { items: number; items_done: number; finished: boolean; deadline: Date }[]
        >`
          select items, items_done, finished_at is not null as finished, deadline
          from sync.scheduled_ticks where task = 'catchup'`;
        return row?.finished ? row : undefined;
      },
      { what: "the catch-up run recorded as finished" },
    );
    expect(tick).toMatchObject({ items: 2, items_done: 2, finished: true });
    expect((tick?.deadline.getUTCMinutes() ?? -1) % 5).toBe(0);
  });
});
