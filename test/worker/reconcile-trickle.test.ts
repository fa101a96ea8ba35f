// The reconcile is a trickle (issue 52): the merchants due (never reconciled, or their slot has come) are
// queued behind every event job, a few at a time; recent ones are not; when the merchants do not fit
// RECONCILE_BUDGET_SHARE the interval stretches, and `status --json` and /metrics show it beside the configured.
import { registerProcessMetrics } from "@loops-sync/cli/process-metrics";
import {
  FIRST_RUN_PRIORITY,
  paceBackground,
  RECONCILE_PRIORITY,
} from "@loops-sync/worker/reconcile/pace-background";
import { merchantPhase } from "@loops-sync/worker/reconcile/reconcile-schedule";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "../support/db.ts";
import { runCli } from "../support/operator-run.ts";
import { parseExposition } from "../support/scrape.ts";

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase();
});
afterAll(async () => {
  await db?.drop();
});

const jobs = () =>
  db.sql<{ task_identifier: string; priority: number; key: string | null }[]>`
    select task_identifier, priority, key from graphile_worker.jobs order by key`;
const pace = (maxRps = 25) => paceBackground({ sql: db.sql }, { cron: "*/15 * * * *", maxRps, share: 0.5 });

describe("the reconcile trickle", () => {
  it("queues the merchants never reconciled at once, behind event jobs, and the channel catalog once a round", async () => {
    await db.sql`
      insert into sync.merchants (id, learned_from, reconciled_at, reconcile_calls)
      values ('mer_new_1', 'config', null, null), ('mer_new_2', 'config', null, null),
             ('mer_recent', 'config', now() - interval '1 minute', 7)`;
    const step = await pace();
    expect(step.queued.sort()).toEqual(["mer_new_1", "mer_new_2"]);
    expect(await jobs()).toEqual([
      { task_identifier: "refresh_channels", priority: RECONCILE_PRIORITY, key: "channels" },
      { task_identifier: "reconcile_merchant", priority: FIRST_RUN_PRIORITY, key: "reconcile:mer_new_1" },
      { task_identifier: "reconcile_merchant", priority: FIRST_RUN_PRIORITY, key: "reconcile:mer_new_2" },
    ]);
    // New merchants go ahead of routine background work, behind event jobs (0).
    expect(FIRST_RUN_PRIORITY).toBeGreaterThan(0);
    expect(RECONCILE_PRIORITY).toBeGreaterThan(FIRST_RUN_PRIORITY);
    // Queued or running already: not queued twice, and the channel catalog waits for the next round.
    expect((await pace()).queued).toEqual([]);
    expect(await jobs()).toHaveLength(3);
  });

  it("queues a stale merchant and leaves a recent one, a few at a time", async () => {
    await db.sql`delete from graphile_worker._private_jobs`;
    await db.sql`delete from sync.merchants`;
    await db.sql`
      insert into sync.merchants (id, learned_from, reconciled_at, reconcile_calls)
      select 'mer_stale_' || i, 'config', now() - interval '2 hours', 7 from generate_series(1, 20) i
      union all select 'mer_recent', 'config', now() - interval '1 minute', 7`;
    const step = await pace();
    // 25 × 0.5 × 4 s / 7 calls: eight merchants' reconciles in the queue at a time.
    expect(step.queued).toHaveLength(8);
    expect(step.queued.every((id) => id.startsWith("mer_stale_"))).toBe(true);
    expect(step).toMatchObject({ configuredMs: 900_000, effectiveMs: 900_000 });
  });

  it("stretches when the merchants do not fit its share, visibly in status --json and /metrics", async () => {
    await db.sql`delete from graphile_worker._private_jobs`;
    await db.sql`delete from sync.merchants`;
    await db.sql`
      insert into sync.merchants (id, learned_from, reconciled_at, reconcile_calls)
      select 'mer_' || lpad(i::text, 5, '0'), 'config', now() - interval '1 minute', 7
      from generate_series(1, 5000) i`;
    // 5,000 merchants × 7 calls at 25 × 0.5 / 1.2 calls/s: 3,360 s, past twice the 900 s configured.
    expect(await pace()).toMatchObject({ configuredMs: 900_000, effectiveMs: 3_360_000 });

    const status = await runCli(["status", "--json"], { DATABASE_URL: db.url });
    const tick = (
      JSON.parse(status.stdout) as { scheduledTicks: Record<string, unknown>[] }
    ).scheduledTicks.find((t) => t.task === "reconcile");
    expect(tick).toMatchObject({
      intervalSeconds: 900,
      effectiveIntervalSeconds: 3360,
      overran: true,
      items: 5000,
      itemsDone: 5000,
    });
    const samples = parseExposition(
      await registerProcessMetrics({ sql: db.sql, merchantLabelsMax: 10 }).metrics(),
    );
    const interval = (kind: string) =>
      samples.find(
        (s) =>
          s.name === "loops_sync_scheduled_interval_seconds" &&
          s.labels.task === "reconcile" &&
          s.labels.kind === kind,
      )?.value;
    expect(interval("configured")).toBe(900);
    expect(interval("effective")).toBe(3360);
    expect(
      samples.find((s) => s.name === "loops_sync_scheduled_run_overran" && s.labels.task === "reconcile")
        ?.value,
    ).toBe(1);
  });
});

describe("the catch-up trickle", () => {
  const MINUTE = 60_000;
  const catchupJobs = () =>
    db.sql<{ key: string; priority: number }[]>`
      select key, priority from graphile_worker.jobs where task_identifier = 'catchup' order by key`;

  it("spreads the merchants' catch-ups over CATCHUP_CRON's interval instead of firing them at the tick", async () => {
    await db.sql`delete from graphile_worker._private_jobs`;
    await db.sql`delete from sync.merchants`;
    await db.sql`
      insert into sync.merchants (id, learned_from, reconciled_at, reconcile_calls)
      select 'mer_c' || lpad(i::text, 4, '0'), 'config', now(), 7 from generate_series(1, 300) i`;
    // Every merchant caught up at its slot of the interval before the one the test steps through.
    const interval = 5 * MINUTE;
    const start = Math.ceil(Date.now() / interval) * interval;
    const ids = (await db.sql<{ id: string }[]>`select id from sync.merchants`).map((r) => r.id);
    const lastRuns = ids.map((id) =>
      new Date(start - interval + merchantPhase(id) * interval + 1000).toISOString(),
    );
    await db.sql`
      insert into sync.cursors (merchant_id, last_run_finished_at, last_run_status)
      select id, at, 'ok' from unnest(${ids}::text[], ${lastRuns}::text[]::timestamptz[]) as t(id, at)`;
    const perMinute = [0, 0, 0, 0, 0];
    const seen = new Map<string, number>();
    for (let at = start + 5000; at <= start + interval; at += 5000) {
      const step = await paceBackground(
        { sql: db.sql },
        {
          cron: "0 0 1 1 *",
          reconcile: false,
          catchupCron: "*/5 * * * *",
          maxRps: 100,
          now: at,
          maxJobs: 1000,
        },
      );
      for (const id of step.caughtUp) seen.set(id, (seen.get(id) ?? 0) + 1);
      perMinute[Math.floor((at - 1 - start) / MINUTE)]! += step.caughtUp.length;
      // The queued merchants run and end at once.
      await db.sql`
        update sync.cursors set last_run_finished_at = ${new Date(at)}
        where merchant_id = any(${step.caughtUp}::text[])`;
      await db.sql`delete from graphile_worker._private_jobs`;
    }
    // Each merchant once in the interval, at its offset: about a fifth of them each minute.
    expect(seen.size).toBe(300);
    expect([...seen.values()].every((n) => n === 1)).toBe(true);
    for (const n of perMinute) {
      expect(n).toBeGreaterThan(60 * 0.6);
      expect(n).toBeLessThan(60 * 1.4);
    }
  });

  it("takes new merchants first, ahead of routine work, and leaves a start's run what it lists", async () => {
    await db.sql`delete from graphile_worker._private_jobs`;
    await db.sql`delete from sync.cursors`;
    await db.sql`
      insert into sync.cursors (merchant_id, last_run_finished_at, last_run_status)
      select id, now() - interval '1 hour', 'ok' from sync.merchants where id <> 'mer_c0001'`;
    const step = await paceBackground(
      { sql: db.sql },
      { cron: "0 0 1 1 *", reconcile: false, catchupCron: "*/5 * * * *", maxRps: 25 },
    );
    // Four seconds of the share's work at one call a catch-up: 50 jobs, the new merchant first.
    expect(step.caughtUp).toHaveLength(50);
    expect(step.caughtUp[0]).toBe("mer_c0001");
    const jobs = await catchupJobs();
    expect(jobs.find((j) => j.key === "catchup:mer_c0001")?.priority).toBe(FIRST_RUN_PRIORITY);
    expect(jobs.filter((j) => j.priority === RECONCILE_PRIORITY)).toHaveLength(49);

    await db.sql`delete from graphile_worker._private_jobs`;
    await db.sql`select graphile_worker.add_job('catchup', '{"dueOnly":true}'::json, job_key => 'catchup')`;
    const beside = await paceBackground(
      { sql: db.sql },
      { cron: "0 0 1 1 *", reconcile: false, catchupCron: "*/5 * * * *", maxRps: 25 },
    );
    expect(beside.caughtUp).toEqual([]);
  });

  it("queues nothing beside a start's run that ends while the step looks", async () => {
    await db.sql`delete from graphile_worker._private_jobs`;
    await db.sql`delete from sync.cursors`;
    await db.sql`delete from sync.merchants`;
    await db.sql`insert into sync.merchants (id, learned_from) values ('mer_a', 'config'), ('mer_b', 'config')`;
    await db.sql`select graphile_worker.add_job('catchup', '{"dueOnly":true}'::json, job_key => 'catchup')`;
    // The run ends right after the step's first read: it records both merchants, then leaves the queue.
    const endRun = async () => {
      await db.sql`
        insert into sync.cursors (merchant_id, last_run_finished_at, last_run_status)
        values ('mer_a', now(), 'ok'), ('mer_b', now(), 'ok')`;
      await db.sql`delete from graphile_worker._private_jobs where key = 'catchup'`;
    };
    let first = true;
    const sql = new Proxy(db.sql, {
      apply(target, self, args: Parameters<typeof db.sql>) {
        const query = Reflect.apply(target, self, args) as PromiseLike<unknown>;
        if (!first) return query;
        first = false;
        return Promise.resolve(query).then(async (rows) => {
          await endRun();
          return rows;
        });
      },
    });
    const step = await paceBackground(
      { sql },
      { cron: "0 0 1 1 *", reconcile: false, catchupCron: "*/5 * * * *", maxRps: 25 },
    );
    expect(first).toBe(false);
    expect(step.caughtUp).toEqual([]);
    expect(await catchupJobs()).toEqual([]);
  });

  it("gives each new merchant its backfill and then its first reconcile, merchant by merchant", async () => {
    await db.sql`delete from graphile_worker._private_jobs`;
    await db.sql`delete from sync.cursors`;
    await db.sql`delete from sync.merchants`;
    await db.sql`
      insert into sync.merchants (id, learned_from) values ('mer_a', 'config'), ('mer_b', 'config'), ('mer_c', 'config')`;
    const step = await paceBackground(
      { sql: db.sql },
      { cron: "*/15 * * * *", catchupCron: "*/5 * * * *", maxRps: 25, maxJobs: 4 },
    );
    expect({ caughtUp: step.caughtUp, reconciled: step.queued }).toEqual({
      caughtUp: ["mer_a", "mer_b"],
      reconciled: ["mer_a", "mer_b"],
    });
  });

  it("shares the background share with the reconcile: both stretch, visibly in status --json and /metrics", async () => {
    await db.sql`delete from graphile_worker._private_jobs`;
    await db.sql`delete from sync.cursors`;
    await db.sql`delete from sync.merchants`;
    await db.sql`
      insert into sync.merchants (id, learned_from, reconciled_at, reconcile_calls)
      select 'mer_' || lpad(i::text, 5, '0'), 'config', now() - interval '1 minute', 7
      from generate_series(1, 5000) i`;
    await db.sql`
      insert into sync.cursors (merchant_id, last_run_finished_at, last_run_status)
      select id, now() - interval '1 minute', 'ok' from sync.merchants`;
    // 5,000 × (1 call / 300 s + 7 calls / 900 s) = 55.6 calls/s against 25 × 0.5 / 1.2 = 10.4: 5.33 × each.
    const step = await paceBackground(
      { sql: db.sql },
      { cron: "*/15 * * * *", catchupCron: "*/5 * * * *", maxRps: 25, share: 0.5 },
    );
    expect(step).toMatchObject({
      configuredMs: 900_000,
      effectiveMs: 4_800_000,
      catchup: { configuredMs: 300_000, effectiveMs: 1_600_000 },
    });
    const status = await runCli(["status", "--json"], { DATABASE_URL: db.url });
    const tick = (
      JSON.parse(status.stdout) as { scheduledTicks: Record<string, unknown>[] }
    ).scheduledTicks.find((t) => t.task === "catchup");
    expect(tick).toMatchObject({ intervalSeconds: 300, effectiveIntervalSeconds: 1600, overran: true });
    const text = await runCli(["status"], { DATABASE_URL: db.url });
    expect(text.stdout).toMatch(/scheduled catchup: .*trickle every 1600s \(configured 300s, stretched/);
    const samples = parseExposition(
      await registerProcessMetrics({ sql: db.sql, merchantLabelsMax: 10 }).metrics(),
    );
    const interval = (task: string, kind: string) =>
      samples.find(
        (s) =>
          s.name === "loops_sync_scheduled_interval_seconds" &&
          s.labels.task === task &&
          s.labels.kind === kind,
      )?.value;
    expect(interval("catchup", "effective")).toBe(1600);
    expect(interval("reconcile", "effective")).toBe(4800);
  });
});
