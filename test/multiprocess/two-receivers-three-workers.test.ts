// Two receivers and three workers, each its own `loops-sync` process, on one database under load: the
// sandbox delivers every event to both receivers (and duplicates some), orders change in quick bursts so
// the workers race on the same rows. No event may be applied twice, no update may be lost.

import { randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import { type Sandbox, startSandbox } from "@loops-sync/sandbox";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { compareReplicaWithTruth } from "#testkit/compare-replica";
import {
  type LoopsSyncProcess,
  loopsSyncEnv,
  ProcessGroup,
  receiverUrlOf,
  recordSecrets,
} from "#testkit/processes";
import { waitFor } from "#testkit/wait-for";
import { chaosSeed } from "../support/chaos-seed.ts";
import { createTestDatabase, type TestDatabase } from "../support/db.ts";
import { checkVersionLog, installVersionLog } from "../support/version-log.ts";

const SEED = Number(process.env.LOOPS_SYNC_CHAOS_SEED ?? Math.floor(Math.random() * 2 ** 31));
const SOAK = process.env.LOOPS_SYNC_SOAK === "1";
const LOAD_MS = SOAK ? 120_000 : 8_000;
const RUN_ID = `multi-${randomBytes(4).toString("hex")}`;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe(`two receivers and three workers on one database (seed ${SEED})`, () => {
  const procs = new ProcessGroup();
  const world = chaosSeed({ merchants: 2, label: "multi" });
  let db: TestDatabase;
  let sandbox: Sandbox;
  let workers: LoopsSyncProcess[] = [];

  beforeAll(async () => {
    db = await createTestDatabase();
    await installVersionLog(db.sql);
    sandbox = await startSandbox({ seed: world.seed, timeScale: 10, randomSeed: SEED });
    recordSecrets(RUN_ID, [world.credentials.clientSecret, world.webhookSecret]);
    const env = loopsSyncEnv({
      databaseUrl: db.url,
      api: sandbox,
      credentials: world.credentials,
      webhookSecrets: [world.webhookSecret],
      extra: {
        WORKER_CONCURRENCY: "4",
        DATABASE_POOL_SIZE: "4",
        LOOPS_MERCHANT_IDS: world.merchantIds.join(","),
      },
    });
    const receivers = [1, 2].map((n) =>
      procs.spawn({ name: `${RUN_ID}-receiver-${n}`, args: ["receiver"], env }),
    );
    // Debug level for the workers: their "Completed task" and "Completed order batch" lines show that each
    // one did work.
    workers = [1, 2, 3].map((n) =>
      procs.spawn({ name: `${RUN_ID}-worker-${n}`, args: ["worker"], env: { ...env, LOG_LEVEL: "debug" } }),
    );
    for (const r of receivers) {
      const url = await receiverUrlOf(r);
      sandbox.addWebhookEndpoint({ url: `${url}/webhooks/loops`, secrets: [world.webhookSecret] });
    }
    await Promise.all(workers.map((w) => w.waitForLine(/"msg":"worker started"/)));
  }, 90_000);

  afterAll(async () => {
    await procs.killAll();
    await sandbox?.close();
    await db?.drop();
  }, 30_000);

  it("applies every version once and loses none", { timeout: LOAD_MS + 90_000 }, async () => {
    try {
      sandbox.setFaults({ seed: SEED, webhookDuplicateRate: 0.2, webhookReorderWindowMs: 300 });
      sandbox.startGenerator({ ratePerSecond: 12, advanceEveryMs: 250 });
      // Bursts on the same orders: several versions in one tick, delivered to both receivers.
      const deadline = Date.now() + LOAD_MS;
      let bursts = 0;
      while (Date.now() < deadline) {
        const open = sandbox.truth
          .orders()
          .filter((o) => !["delivered", "rejected", "cancelled"].includes(o.status));
        for (const o of open.slice(0, 3)) {
          sandbox.updateOrder(o.id, { notes: `burst ${bursts} ${randomBytes(3).toString("hex")}` });
          try {
            sandbox.advanceOrder(o.id);
          } catch {
            // The generator may have finished it meanwhile; the note change above still races the workers.
          }
          bursts++;
        }
        await sleep(200);
      }
      sandbox.stopGenerator();
      await sandbox.flushDeliveries();

      let problems: string[] = [];
      await waitFor(
        async () => {
          problems = await compareReplicaWithTruth(db.sql, sandbox.truth.orders());
          return problems.length === 0;
        },
        { timeoutMs: 60_000, intervalMs: 500, what: "every order to reach its latest version" },
      ).catch((error: Error) => {
        throw new Error(
          `${error.message}; ${problems.length} differences: ${problems.slice(0, 10).join("; ")}`,
        );
      });

      const truthEvents = sandbox.truth.events();
      const stored = await db.sql<{ id: string; outcome: string }[]>`select id, outcome from sync.events`;
      const storedIds = new Set(stored.map((e) => e.id));
      expect(truthEvents.filter((e) => !storedIds.has(e.id)).map((e) => e.id)).toEqual([]);
      const log = await checkVersionLog(db.sql);
      expect(log.backwards, "versions that went backwards").toEqual([]);
      expect(log.twice, "versions applied twice").toEqual([]);
      const stats = sandbox.stats();
      // Both receivers got the load: every event was delivered to each endpoint.
      expect(stats.webhooksDelivered).toBeGreaterThanOrEqual(2 * truthEvents.length);
      console.log(
        `multiprocess figures: ${JSON.stringify({
          seed: SEED,
          orders: sandbox.truth.orders().length,
          events: truthEvents.length,
          bursts,
          webhooksDelivered: stats.webhooksDelivered,
          webhooksDuplicated: stats.webhooksDuplicated,
          versionWrites: log.writes,
          outcomes: Object.fromEntries(
            [...new Set(stored.map((e) => e.outcome))].map((o) => [
              o,
              stored.filter((e) => e.outcome === o).length,
            ]),
          ),
        })}`,
      );
      // All three workers shared the load (a worker alive but unable to take jobs would do none).
      const completed = workers.map(
        (w) => (readFileSync(w.logFile, "utf8").match(/Completed (task|order batch)/g) ?? []).length,
      );
      console.log(`multiprocess: jobs completed per worker ${JSON.stringify(completed)}`);
      for (const [i, n] of completed.entries())
        expect(n, `jobs completed by worker ${i + 1}`).toBeGreaterThan(0);
      for (const p of procs.running()) expect(p.alive(), `${p.name} still running`).toBe(true);
      expect(procs.running()).toHaveLength(5);
    } catch (error) {
      console.error(`multiprocess: FAILED with seed ${SEED}; replay with LOOPS_SYNC_CHAOS_SEED=${SEED}`);
      throw error;
    }
  });
});
