import { createLogger } from "@loops-sync/config";
import { createPoolRegistry, type PoolRegistry } from "@loops-sync/worker/jobs/pool-registry";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "../support/db.ts";

let db: TestDatabase;
let pools: PoolRegistry;
beforeAll(async () => {
  db = await createTestDatabase();
  pools = createPoolRegistry({ sql: db.sql, logger: createLogger({ name: "test", level: "silent" }) });
});
afterAll(async () => {
  await pools?.close();
  await db?.drop();
});

describe("retiring a job pool whose claim lost its answer", () => {
  it("unlocks what its id still holds and gives back the attempt each lost claim took", async () => {
    const pool = "pool-lost-claims";
    await pools.register(pool);
    // Three lost claims of one catch-up (max 3 attempts), one of another job: locked, never run.
    const [catchup] = await db.sql<{ id: string }[]>`
      select id from graphile_worker.add_job('catchup', '{}'::json, queue_name => 'catchup_ticks',
        max_attempts => 3)`;
    const [other] = await db.sql<{ id: string }[]>`
      select id from graphile_worker.add_job('process_events', '{}'::json)`;
    // As graphile-worker's claim (get_job) leaves a job: locked by the pool, one attempt taken.
    await db.sql`
      update graphile_worker._private_jobs
      set locked_by = ${pool}, locked_at = now(), attempts = case when id = ${catchup!.id} then 3 else 1 end
      where id in (${catchup!.id}, ${other!.id})`;

    expect(await pools.retire(pool)).toBe(2);
    const jobs = await db.sql<{ id: string; locked_by: string | null; attempts: number }[]>`
      select id, locked_by, attempts from graphile_worker.jobs order by id`;
    expect(jobs).toEqual([
      { id: catchup!.id, locked_by: null, attempts: 2 },
      { id: other!.id, locked_by: null, attempts: 0 },
    ]);
  });
});
