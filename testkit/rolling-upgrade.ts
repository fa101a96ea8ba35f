// A rolling upgrade from the previous release to this tree, as an operator does it on a live deployment: the
// old receiver and worker take signed webhooks from the sandbox while this tree's `migrate` runs, keep working
// on the new schema, then the new processes start and the old ones stop (new up before old down). It measures
// what a partner would feel (every webhook answer, every read of replica.orders) and checks what was kept.
// It asserts nothing: the upgrade test and `pnpm bench:upgrade` judge the report.

import { randomBytes } from "node:crypto";
import { type Sandbox, startSandbox } from "@loops-sync/sandbox";
import { startDeliveryLog } from "./delivery-log.ts";
import { createHistoryDatabase } from "./history-database.ts";
import { type MigrateRun, migrationsWith, runMigrate } from "./migrate-run.ts";
import { startOrderReader } from "./order-reader.ts";
import { checkoutRelease, PREVIOUS_RELEASE } from "./previous-release.ts";
import { loopsSyncEnv, ProcessGroup, REPO_ROOT, receiverUrlOf, recordSecrets } from "./processes.ts";
import { settleMirror } from "./settle-mirror.ts";
import type { Phase, RollingUpgradeReport } from "./upgrade-report.ts";

export interface RollingUpgradeOptions {
  /** A server-level Postgres URL (a superuser that may create databases). */
  serverUrl: string;
  /** Inbox rows of seeded history (orders: a fifth; feed changes: as many). */
  events: number;
  /** Keep the seeded database as a template for the next run. Default: true. */
  cacheHistory?: boolean;
  /** VACUUM the seeded history, not only ANALYZE it. Default: false. */
  vacuumHistory?: boolean;
  /** New sandbox orders per second; each has about five events (≈ 20 webhooks/s at 4). Default: 4. */
  ordersPerSecond?: number;
  /** Seconds of traffic before the "before" phase starts: orders' lifecycles fill up to the full rate. Default: 0. */
  warmupSeconds?: number;
  /** Seconds of traffic before migrate, with the old processes on the new schema, and after. */
  beforeSeconds?: number;
  oldOnNewSeconds?: number;
  afterSeconds?: number;
  /**
   * A folder of migration files to apply on top of the tree's (a scratch online migration; a blocking one
   * to see the test fail), through `migrate --migrations-dir`. Default: none, the tree's own.
   */
  extraMigrations?: string;
  /** Progress lines. Default: none. */
  log?: (line: string) => void;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export async function runRollingUpgrade({
  serverUrl,
  events,
  cacheHistory = true,
  vacuumHistory = false,
  ordersPerSecond = 4,
  warmupSeconds = 0,
  beforeSeconds = 5,
  oldOnNewSeconds = 20,
  afterSeconds = 5,
  extraMigrations,
  log = () => {},
}: RollingUpgradeOptions): Promise<RollingUpgradeReport> {
  const runId = `upgrade-${randomBytes(4).toString("hex")}`;
  const procs = new ProcessGroup();
  const phases: Phase[] = [];
  const phase = (name: Phase["name"], start: number) => phases.push({ name, start, end: Date.now() });
  const cleanups: (() => Promise<unknown>)[] = [];
  try {
    const migrations = extraMigrations ? await migrationsWith(extraMigrations) : undefined;
    if (migrations) cleanups.push(migrations.remove);
    const release = await checkoutRelease(PREVIOUS_RELEASE.commit);
    cleanups.push(release.remove);
    log(
      `previous release ${PREVIOUS_RELEASE.version} checked out and installed in ${release.seconds.toFixed(1)} s`,
    );
    const db = await createHistoryDatabase({
      serverUrl,
      releaseRoot: release.root,
      releaseCommit: release.commit,
      events,
      cache: cacheHistory,
      vacuum: vacuumHistory,
    });
    cleanups.push(db.drop);
    log(`history: ${JSON.stringify(db.seeded)}`);
    const sandbox: Sandbox = await startSandbox({ timeScale: 1 });
    cleanups.push(() => sandbox.close());
    const secret = `whsec_${randomBytes(32).toString("base64")}`;
    recordSecrets(runId, [sandbox.credentials.clientSecret, secret]);
    const env = loopsSyncEnv({
      databaseUrl: db.url,
      api: sandbox,
      credentials: sandbox.credentials,
      webhookSecrets: [secret],
      extra: {
        WORKER_CONCURRENCY: "4",
        DATABASE_POOL_SIZE: "4",
        LOOPS_MERCHANT_IDS: sandbox.merchantIds.join(","),
      },
    });
    const start = (tree: "old" | "new", args: string[]) =>
      procs.spawn({
        name: `${runId}-${tree}-${args[0]}`,
        args,
        env,
        root: tree === "old" ? release.root : REPO_ROOT,
      });

    const oldReceiver = start("old", ["receiver"]);
    const oldWorker = start("old", ["worker"]);
    const oldUrl = await receiverUrlOf(oldReceiver, 60_000);
    await oldWorker.waitForLine(/"msg":"worker started"/, 60_000);
    const endpoint = sandbox.addWebhookEndpoint({ url: `${oldUrl}/webhooks/loops`, secrets: [secret] });
    const deliveries = startDeliveryLog(sandbox);
    cleanups.push(async () => deliveries.stop());
    const reader = startOrderReader({
      databaseUrl: db.url,
      merchantIds: [...sandbox.merchantIds, ...db.seeded.merchantIds.slice(0, 2)],
    });
    cleanups.push(() => reader.stop());
    sandbox.startGenerator({ ratePerSecond: ordersPerSecond, advanceEveryMs: 1000 });
    log("old receiver and worker up, traffic on");

    await sleep(warmupSeconds * 1000);
    let at = Date.now();
    await sleep(beforeSeconds * 1000);
    phase("before", at);

    at = Date.now();
    const migrate: MigrateRun = await runMigrate({ databaseUrl: db.url, migrationsDir: migrations?.dir });
    phase("migrate", at);
    log(`migrate: exit ${migrate.exitCode} in ${migrate.seconds.toFixed(1)} s`);

    at = Date.now();
    await sleep(oldOnNewSeconds * 1000);
    phase("old-on-new", at);
    const [worked] = await db.sql<{ n: number }[]>`
      select count(*)::int as n from replica.changes
       where merchant_id = any(${sandbox.merchantIds}) and changed_at >= ${new Date(at)}`;
    const oldAlive = oldReceiver.alive() && oldWorker.alive();

    at = Date.now();
    const newReceiver = start("new", ["receiver"]);
    const newWorker = start("new", ["worker"]);
    const newUrl = await receiverUrlOf(newReceiver, 60_000);
    await newWorker.waitForLine(/"msg":"worker started"/, 60_000);
    // The load balancer turns to the new receivers; what is in flight to the old one is answered before it stops.
    sandbox.updateWebhookEndpoint(endpoint.id, { url: `${newUrl}/webhooks/loops` });
    await sleep(1000);
    await Promise.all([oldReceiver.kill("SIGTERM"), oldWorker.kill("SIGTERM")]);
    const oldExits = await Promise.all([oldReceiver.exited, oldWorker.exited]);
    phase("handover", at);
    log("new receiver and worker up, old ones stopped");

    at = Date.now();
    await sleep(afterSeconds * 1000);
    phase("after", at);

    sandbox.stopGenerator();
    await sandbox.flushDeliveries();
    deliveries.stop();
    await reader.stop();
    const settled = await settleMirror({ sql: db.sql, sandbox, accepted: deliveries.accepted() });
    log(
      `settled: ${settled.mirrorProblems.length} mirror differences, ${settled.acceptedNotStored.length} lost`,
    );

    const before = await db.sql<{ id: number }[]>`select id from sync.migrations`;
    // A deploy pipeline's check, and what the verb costs to start and read the schema on this machine now.
    const check = await runMigrate({
      databaseUrl: db.url,
      migrationsDir: migrations?.dir,
      flags: ["--check"],
    });
    const again = await runMigrate({ databaseUrl: db.url, migrationsDir: migrations?.dir });
    const afterRows = await db.sql<{ id: number }[]>`select id from sync.migrations`;

    return {
      runId,
      release: { ...PREVIOUS_RELEASE, checkoutSeconds: release.seconds },
      seeded: db.seeded,
      phases,
      migrate,
      migrateCheck: check,
      migrateAgain: { ...again, appliedAny: afterRows.length !== before.length },
      answers: deliveries.answers(),
      reads: reader.samples,
      oldOnNew: { changesWritten: worked?.n ?? 0, stillRunning: oldAlive },
      oldExits,
      stillRunning: [newReceiver, newWorker].filter((p) => p.alive()).map((p) => p.name),
      ...settled,
    };
  } finally {
    await procs.killAll();
    for (const cleanup of cleanups.reverse()) await cleanup().catch(() => {});
  }
}
