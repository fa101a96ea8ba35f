// graphile-worker's claim of a job commits, and its answer never arrives: a proxy between the worker and
// Postgres holds the answer of a `get_job` until its transaction committed, drops it and cuts the connection.
// The job is then locked by a live pool whose workers never heard of it. Before the fix it waited for
// graphile-worker's 4-hour lock expiry (and one lost `catchup` claim held the `catchup_ticks` queue as long).

import { randomBytes } from "node:crypto";
import { type Sandbox, startSandbox } from "@loops-sync/sandbox";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { compareReplicaWithTruth } from "#testkit/compare-replica";
import { loopsSyncEnv, ProcessGroup, receiverUrlOf, recordSecrets } from "#testkit/processes";
import { waitFor } from "#testkit/wait-for";
import { chaosSeed } from "../support/chaos-seed.ts";
import { createTestDatabase, type TestDatabase } from "../support/db.ts";
import { type LostAnswerProxy, startLostAnswerProxy } from "../support/lost-answer-proxy.ts";

const RUN_ID = `lost-claim-${randomBytes(4).toString("hex")}`;
const LOST_ANSWERS = 6;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
/** The contract: a job whose claim lost its answer still runs within 2 minutes. */
const RUNS_WITHIN_MS = 120_000;
/** And no job stays locked longer than this. */
const LOCKED_AT_MOST_SECONDS = 60;

describe("a job claim whose answer is lost", () => {
  const procs = new ProcessGroup();
  const world = chaosSeed({ merchants: 2, label: "lost-claim" });
  let db: TestDatabase;
  let sandbox: Sandbox;
  let proxy: LostAnswerProxy;

  beforeAll(async () => {
    db = await createTestDatabase();
    // At the real time scale: sped up, the sandbox's tokens expire every 30 s and Loops pauses the calls.
    sandbox = await startSandbox({ seed: world.seed });
    recordSecrets(RUN_ID, [world.credentials.clientSecret, world.webhookSecret]);
    const target = new URL(db.url);
    proxy = await startLostAnswerProxy({ host: target.hostname, port: Number(target.port || 5432) });
  });
  afterAll(async () => {
    await procs.killAll();
    await proxy?.close();
    await sandbox?.close();
    await db?.drop();
  }, 30_000);

  const env = (databaseUrl: string, extra: Record<string, string> = {}) =>
    loopsSyncEnv({
      databaseUrl,
      api: sandbox,
      credentials: world.credentials,
      webhookSecrets: [world.webhookSecret],
      extra: { LOOPS_MERCHANT_IDS: world.merchantIds.join(","), ...extra },
    });
  const throughProxy = () => {
    const url = new URL(db.url);
    url.hostname = "127.0.0.1";
    url.port = String(proxy.port);
    return url.toString();
  };
  /**
   * The longest a job whose claim lost its answer has been locked by the pool that claimed it, in seconds.
   * (Jobs that really run may take longer: a catch-up over a paused scope runs for minutes.)
   */
  const longestStrandedLock = async () =>
    (
      await db.sql<{ s: number }[]>`
        select coalesce(max(extract(epoch from now() - j.locked_at)), 0)::float8 as s
        from graphile_worker.jobs j
        join unnest(${proxy.dropped.map((r) => r.id!)}::bigint[], ${proxy.dropped.map((r) => r.locked_by!)}::text[])
          as d(id, locked_by) on d.id = j.id and d.locked_by = j.locked_by`
    )[0]!.s;
  /** Waits for `done`; then no job may have been locked longer than the contract allows meanwhile. */
  const waitNoLongLocks = async (done: () => Promise<boolean>, what: string) => {
    let longest = 0;
    await waitFor(
      async () => {
        longest = Math.max(longest, await longestStrandedLock());
        return done();
      },
      { timeoutMs: RUNS_WITHIN_MS, intervalMs: 500, what },
    ).catch(async (error: Error) => {
      throw new Error(`${error.message}; queue: ${JSON.stringify(await queueState())}`, { cause: error });
    });
    expect(longest).toBeLessThan(LOCKED_AT_MOST_SECONDS);
  };
  /** What the queue holds, for a failure's message. */
  const queueState = async () => ({
    jobs: await db.sql`
      select id, task_identifier, queue_name, locked_by, locked_at, attempts, run_at, last_error
      from graphile_worker.jobs order by id limit 20`,
    queues: await db.sql`select queue_name, locked_by, locked_at from graphile_worker._private_job_queues`,
    pools: await db.sql`select id, heartbeat_at from sync.worker_pools`,
    dropped: proxy.dropped.map((r) => ({ id: r.id, locked_by: r.locked_by, queue: r.job_queue_id })),
    // What each of the worker's connections is doing (a stall shows here: who waits, in a transaction or not).
    activity: await db.sql`
      select application_name, state, wait_event, (now() - state_change)::text as for, left(query, 100) as query
      from pg_stat_activity
      where datname = current_database() and pid <> pg_backend_pid() and application_name like 'loops-sync%'
        and application_name <> 'loops-sync-test'
      order by application_name, state`,
  });
  const jobsLeft = async (ids: readonly string[]) =>
    (
      await db.sql<{ n: number }[]>`
        select count(*)::int as n from graphile_worker.jobs where id = any(${ids}::bigint[])`
    )[0]!.n;

  it("runs a catch-up whose claim lost its answer, and frees the catchup_ticks queue, within 2 minutes", {
    timeout: 240_000,
  }, async () => {
    // The worker queues a catch-up at start, in the named queue: its claim is the one dropped.
    proxy.arm(1, (row) => row.job_queue_id !== null);
    const worker = procs.spawn({
      name: `${RUN_ID}-catchup-worker`,
      args: ["worker"],
      env: env(throughProxy(), { WORKER_CONCURRENCY: "4", CATCHUP_CRON: "* * * * *" }),
    });
    await waitFor(() => proxy.dropped.length === 1, { timeoutMs: 60_000, what: "a catch-up claim dropped" });
    const lostAt = Date.now();
    const stranded = proxy.dropped[0]!;
    expect(stranded.task_id).toBeTruthy();
    // Run again means claimed by a live pool (a catch-up run may take minutes) or done; and the queue is no
    // longer held by the pool that never heard of its claim.
    await waitNoLongLocks(async () => {
      const [job] = await db.sql<{ locked_by: string | null }[]>`
        select locked_by from graphile_worker.jobs where id = ${stranded.id!}`;
      const [queue] = await db.sql<{ locked_by: string | null }[]>`
        select locked_by from graphile_worker._private_job_queues where queue_name = 'catchup_ticks'`;
      const ranAgain = !job || (job.locked_by !== null && job.locked_by !== stranded.locked_by);
      return ranAgain && queue?.locked_by !== stranded.locked_by;
    }, "the stranded catch-up to run again and its queue to be free");
    expect(Date.now() - lostAt).toBeLessThan(RUNS_WITHIN_MS);
    expect(worker.alive()).toBe(true);
    await worker.waitForLine(/job pool was replaced/);
    await worker.kill("SIGTERM");
  });

  // Under this load a round trip to Postgres (through the proxy, and a busy worker) is often longer than a
  // request-budget slot: before leases counted from the budget's answer, every lease lapsed unspent and the
  // worker's jobs stalled here with nothing sent to Loops (docs/decisions.md, "A lease counts from the budget's answer").
  it(`settles every event and mirrors every order within 2 minutes after ${LOST_ANSWERS} lost answers`, {
    timeout: 420_000,
  }, async () => {
    const receiver = procs.spawn({ name: `${RUN_ID}-receiver`, args: ["receiver"], env: env(db.url) });
    sandbox.addWebhookEndpoint({
      url: `${await receiverUrlOf(receiver)}/webhooks/loops`,
      secrets: [world.webhookSecret],
    });
    // Catch-up and the reconcile at start may hold a few workers for minutes; the default 8 leave room.
    const worker = procs.spawn({ name: `${RUN_ID}-worker`, args: ["worker"], env: env(throughProxy()) });
    await worker.waitForLine(/"msg":"worker started"/);
    sandbox.startGenerator({ ratePerSecond: 5, advanceEveryMs: 300 });
    // Order events go to the order scheduler, not graphile-worker: the claims to lose are location reads
    // (real calls and writes) and cheap process_events jobs (unknown events: nothing to do), added straight
    // to the server.
    let adding = true;
    const addJobs = (async () => {
      for (let round = 0; adding; round++) {
        await db.sql`
          select graphile_worker.add_job('process_events', json_build_object('eventIds', array['evt_none_' || n]))
          from generate_series(1, 3) as n`;
        if (round % 10 === 0) {
          await db.sql`
            select graphile_worker.add_job('refresh_locations', json_build_object('merchantId', m))
            from unnest(${world.merchantIds}::text[]) as m`;
        }
        await sleep(200);
      }
    })();
    // One lost answer at a time, while orders flow: each is a claim that committed and was never heard of.
    const before = proxy.dropped.length;
    for (let n = 1; n <= LOST_ANSWERS; n++) {
      proxy.arm(1);
      await waitFor(() => proxy.dropped.length === before + n, {
        timeoutMs: 60_000,
        what: `lost answer ${n}`,
      });
    }
    const lastLostAt = Date.now();
    sandbox.stopGenerator();
    adding = false;
    await addJobs;
    // A released job is often the next one claimed, so one job may lose several answers.
    const stranded = [...new Set(proxy.dropped.slice(before).map((row) => row.id!))];
    expect(proxy.dropped.slice(before).every((row) => row.locked_by?.startsWith("pool-"))).toBe(true);

    let problems: string[] = [];
    await waitNoLongLocks(async () => {
      if ((await jobsLeft(stranded)) > 0) return false;
      const [left] = await db.sql<{ n: number }[]>`
        select count(*)::int as n from graphile_worker.jobs
        where task_identifier in ('process_events', 'refresh_locations')`;
      if (left!.n > 0) return false;
      // Named in the failure's message: which events wait, and whether the order queue still holds them.
      const pending = await db.sql<{ id: string; type: string; queued: string | null; detail: string }[]>`
        select e.id, e.type,
               (select coalesce(r.not_before::text, 'due') from sync.order_refresh r where r.event_id = e.id
                limit 1) as queued,
               concat_ws(' ', 'event v' || e.order_version, e.payload #>> '{data,previous_status}', '->',
                 e.payload #>> '{data,status}', 'at', e.created_at, 'stored', e.received_at,
                 '; replica v' || o.version, o.status, 'fetched v' || o.fetched_version, 'updated', o.synced_at,
                 '; merchant', m.status) as detail
        from sync.events e left join replica.orders o on o.id = e.order_id
        left join sync.merchants m on m.id = e.merchant_id
        where e.outcome = 'pending' order by e.id limit 5`;
      problems = pending.map(
        (e) => `pending ${e.id} ${e.type} (order queue: ${e.queued ?? "none"}; ${e.detail})`,
      );
      if (pending.length > 0) return false;
      problems = await compareReplicaWithTruth(db.sql, sandbox.truth.orders());
      return problems.length === 0;
    }, "every stranded job run, every event settled, every order mirrored").catch((error: Error) => {
      throw new Error(`${error.message}: ${problems.slice(0, 5).join("; ")}`);
    });
    expect(Date.now() - lastLostAt).toBeLessThan(RUNS_WITHIN_MS);
    expect(sandbox.truth.orders().length).toBeGreaterThan(0);
    expect([receiver.alive(), worker.alive()]).toEqual([true, true]);
  });
});
