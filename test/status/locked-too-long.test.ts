// A job locked longer than its task can run is held by no one (before the worker replaced a pool whose
// claim lost its answer, such a job waited 4 hours). It is counted in `status`, named as needing attention,
// and exported as a gauge for the alert LoopsSyncJobLockedTooLong.

import { registerProcessMetrics } from "@loops-sync/cli/process-metrics";
import { needsAttention, readSyncStatus } from "@loops-sync/status";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "../support/db.ts";

describe("jobs locked longer than their task can run", () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase();
    await db.sql`insert into sync.worker_pools (id, hostname, pid) values ('pool-live', 'host-a', 4242)`;
    /** A job locked by `pool` `minutes` ago, as graphile-worker's claim leaves it (a fixture: only tests do this). */
    const lockedJob = async (task: string, pool: string, minutes: number) => {
      const [job] = await db.sql<{ id: string }[]>`
        select id from graphile_worker.add_job(${task}, '{}'::json, job_key => ${`${task}-${pool}`})`;
      await db.sql`
        update graphile_worker._private_jobs
        set locked_by = ${pool}, locked_at = now() - make_interval(mins => ${minutes}), attempts = 1
        where id = ${job!.id}`;
      return Number(job!.id);
    };
    await lockedJob("process_events", "pool-live", 10);
    await lockedJob("process_events", "pool-gone", 90);
    // Within their task's limit: a refresh for 1 minute, a catch-up run over every merchant for 30.
    await lockedJob("refresh_merchant", "pool-live", 1);
    await lockedJob("catchup", "pool-live", 30);
  });
  afterAll(async () => {
    await db?.drop();
  });

  it("are counted and listed in status, the longest locked first, with the pool's host and pid", async () => {
    const { queue } = await readSyncStatus(db.sql);
    expect(queue.lockedTooLong).toBe(2);
    expect(queue.lockedTooLongJobs.map((j) => [j.task, j.lockedBy, j.host, j.pid, j.limitSeconds])).toEqual([
      ["process_events", "pool-gone", null, null, 300],
      ["process_events", "pool-live", "host-a", 4242, 300],
    ]);
    expect(queue.lockedTooLongJobs[0]!.lockedSeconds).toBeGreaterThanOrEqual(90 * 60);
  });

  it("make status need attention, naming the job and its pool", async () => {
    const items = needsAttention(await readSyncStatus(db.sql), 300).filter(
      (i) => i.kind === "locked_too_long",
    );
    expect(items).toHaveLength(1);
    expect(items[0]!.detail).toMatch(
      /^2 job\(s\) locked longer than their task can run, the longest process_events/,
    );
    expect(items[0]!.detail).toContain("pool-gone");
  });

  it("are exported as loops_sync_jobs_locked_too_long by task", async () => {
    const registry = registerProcessMetrics({ sql: db.sql, merchantLabelsMax: 10 });
    const text = await registry.metrics();
    expect(text).toMatch(/^loops_sync_jobs_locked_too_long\{task="process_events"\} 2$/m);
    expect(text).not.toMatch(/loops_sync_jobs_locked_too_long\{task="(catchup|refresh_merchant)"\}/);
  });
});
