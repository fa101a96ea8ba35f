// A claim of a job commits while Postgres is cut away from the worker (its answer is lost), and the run
// that claimed it stops before Postgres is back: the job stays locked by a pool nobody runs. Before the
// fix, retiring that pool met the outage, gave up and left the job to the sweep, which waits for the
// pool's heartbeat to be `deadAfterMs` old (60 s by default: the outage test's one process_events job
// with one attempt and no error, still locked when its wait ended). Retiring now waits for Postgres.
//
// Real Postgres, the real TCP proxy: the claim is held at a table lock while the proxy is cut, and
// commits on the server once the lock is let go, after its connection is gone.

import { EventEmitter } from "node:events";
import { Writable } from "node:stream";
import { createLogger } from "@loops-sync/config";
import { connect, type Sql } from "@loops-sync/db";
import { graphileLogger } from "@loops-sync/worker/jobs/graphile-logger";
import { createPoolRegistry, type PoolRegistry } from "@loops-sync/worker/jobs/pool-registry";
import { createQueuePool, type QueuePool } from "@loops-sync/worker/jobs/queue-pool";
import {
  type SupervisedRunner,
  type SupervisedRunnerOptions,
  startSupervisedRunner,
} from "@loops-sync/worker/jobs/supervised-runner";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { waitFor } from "#testkit/wait-for";
import { createTestDatabase, type TestDatabase } from "../support/db.ts";
import { startTcpProxy, type TcpProxy } from "../support/tcp-proxy.ts";

/** Far past the tests' waits: only retiring can release the job in time, never the sweep. */
const DEAD_AFTER_MS = 600_000;

/** A worker's job machinery, as start-worker.ts assembles it, through the proxy. */
interface Queue {
  sql: Sql;
  pgPool: QueuePool;
  pools: PoolRegistry;
  runner: SupervisedRunner;
  /** Jobs the task ran, by id. */
  ran: string[];
  /** Its log lines (warnings and up). */
  lines: string[];
}

describe("a job pool retired while Postgres is away", () => {
  let db: TestDatabase;
  let proxy: TcpProxy;
  let queue: Queue | undefined;

  beforeAll(async () => {
    db = await createTestDatabase();
    const target = new URL(db.url);
    proxy = await startTcpProxy({ host: target.hostname, port: Number(target.port || 5432) });
  });
  // In the test's own hooks: a pool left open fails it.
  afterEach(async () => {
    await proxy.restore();
    if (!queue) return;
    await queue.runner.stop();
    await queue.pools.close();
    await queue.pgPool.end();
    await queue.sql.end({ timeout: 5 });
    queue = undefined;
  });
  afterAll(async () => {
    await proxy?.close();
    await db?.drop();
  }, 30_000);

  const startQueue = async (): Promise<Queue> => {
    const url = new URL(db.url);
    url.hostname = "127.0.0.1";
    url.port = String(proxy.port);
    const lines: string[] = [];
    const destination = new Writable({ write: (chunk, _enc, done) => done(void lines.push(String(chunk))) });
    const logger = createLogger({ name: "retire-in-outage", level: "warn", pretty: false, destination });
    // Both through the proxy, as the worker's DATABASE_URL is.
    const sql = connect(url.toString(), { max: 2, applicationName: "loops-sync retire-test" });
    const pools = createPoolRegistry({ sql, logger, deadAfterMs: DEAD_AFTER_MS });
    const pgPool = createQueuePool({ connectionString: url.toString(), max: 3, graceMs: 1000, logger });
    pgPool.on("error", () => {});
    pgPool.on("connect", (client) => client.on("error", () => {}));
    const ran: string[] = [];
    const events: SupervisedRunnerOptions["options"]["events"] = new EventEmitter();
    const runner = await startSupervisedRunner({
      options: {
        pgPool,
        events,
        concurrency: 1,
        noHandleSignals: true,
        pollInterval: 100,
        gracefulShutdownAbortTimeout: 500,
        taskList: { probe: async (_payload, helpers) => void ran.push(helpers.job.id) },
        logger: graphileLogger(logger),
      },
      pools,
      logger,
      onEnd: () => {},
    });
    return { sql, pgPool, pools, runner, ran, lines };
  };

  const lockOf = async (jobId: string) =>
    (
      await db.sql<{ locked_by: string | null }[]>`
        select locked_by from graphile_worker.jobs where id = ${jobId}`
    )[0]?.locked_by;

  /**
   * Cuts the proxy while the worker's claim waits at a lock, then lets the claim commit on the server: the job
   * it takes is locked by `claimedBy`, whose run is replaced, and retiring that pool meets the outage.
   */
  const strandAJob = async ({ runner, lines }: Queue): Promise<{ jobId: string; claimedBy: string }> => {
    const claimedBy = runner.poolId;
    // The claim locks the queue of what it takes, so it waits at this lock on the job queues. The job is
    // added in the same transaction (adding one takes that lock too), due before the claim's transaction
    // began (its now()).
    let letGo!: () => void;
    const held = new Promise<void>((resolve) => {
      letGo = resolve;
    });
    let locked!: () => void;
    const lockTaken = new Promise<void>((resolve) => {
      locked = resolve;
    });
    const holder = db.sql.begin(async (tx) => {
      await tx`lock table graphile_worker._private_job_queues in exclusive mode`;
      locked();
      await held;
      const [added] = await tx<{ id: string }[]>`
        select id from graphile_worker.add_job('probe', '{}'::json, run_at => now() - interval '1 minute')`;
      return String(added!.id);
    });
    try {
      await lockTaken;
      await waitFor(
        async () =>
          (
            await db.sql<{ n: number }[]>`
              select count(*)::int as n from pg_stat_activity
              where datname = current_database() and wait_event_type = 'Lock'
                and query like '%locked_by = $1::text%'`
          )[0]!.n > 0,
        { what: "the worker's claim to wait at the lock" },
      );
      await proxy.cut();
    } finally {
      letGo();
    }
    const jobId = await holder;
    // The claim committed after its connection was gone: no worker knows of the job.
    await waitFor(async () => (await lockOf(jobId)) === claimedBy, {
      what: "the lost claim to lock the job",
    });
    await waitFor(() => lines.some((line) => line.includes(claimedBy) && /retired worker pool/.test(line)), {
      what: "retiring the replaced pool to meet the outage",
    });
    return { jobId, claimedBy };
  };

  it("releases the job its lost claim locked once Postgres is back, and the job runs", async () => {
    queue = await startQueue();
    const { jobId, claimedBy } = await strandAJob(queue);
    await proxy.restore();
    const { ran, lines, runner } = queue;
    await waitFor(() => ran.includes(jobId), { timeoutMs: 60_000, what: "the stranded job to run" }).catch(
      async (error: Error) => {
        throw new Error(`${error.message}: locked by ${await lockOf(jobId)}; log:\n${lines.join("")}`);
      },
    );
    expect(runner.poolId).not.toBe(claimedBy);
  }, 120_000);

  it("stops without waiting for Postgres, leaving the job to the sweep", async () => {
    queue = await startQueue();
    const { jobId, claimedBy } = await strandAJob(queue);
    // As the worker stops: the queue pool stops waiting, then the runner stops, Postgres still away.
    queue.pgPool.stopWaiting();
    await queue.runner.stop();
    expect(queue.lines.join("")).toMatch(/the sweep will once its heartbeat is old/);
    await proxy.restore();
    expect(await lockOf(jobId)).toBe(claimedBy);
  }, 120_000);
});
