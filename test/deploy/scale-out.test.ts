// Scaling out must not change the result. The same webhooks, duplicates included, go to one receiver + one
// worker on one database and to two receivers + three workers on another, all `loops-sync` child processes,
// while the sandbox orders keep changing. Both replicas must equal the sandbox truth, store each event once,
// never move a version backwards, and end identical to each other. (Two receivers + three workers under
// faults and bursts is test/multiprocess; throughput is bench/scale-out.ts, never asserted here.)

import { randomBytes } from "node:crypto";
import { type Sandbox, startSandbox } from "@loops-sync/sandbox";
import { signWebhook } from "@loops-sync/webhooks";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { compareReplicaWithTruth } from "#testkit/compare-replica";
import { loopsSyncEnv, ProcessGroup, receiverUrlOf, recordSecrets } from "#testkit/processes";
import { waitFor } from "#testkit/wait-for";
import { chaosSeed } from "../support/chaos-seed.ts";
import { createTestDatabase, type TestDatabase } from "../support/db.ts";
import { checkVersionLog, installVersionLog } from "../support/version-log.ts";

const ORDERS = 60;
const ROUNDS = 4; // order.created, then three lifecycle steps: 240 events, 300 webhooks with duplicates
const RUN_ID = `scale-out-${randomBytes(4).toString("hex")}`;

interface Topology {
  name: string;
  receivers: number;
  workers: number;
  db?: TestDatabase;
  urls: string[];
}

describe("one receiver + one worker and two receivers + three workers give the same exact replica", () => {
  const procs = new ProcessGroup();
  const world = chaosSeed({ merchants: 2, label: "scaleout" });
  const topologies: Topology[] = [
    { name: "1+1", receivers: 1, workers: 1, urls: [] },
    { name: "2+3", receivers: 2, workers: 3, urls: [] },
  ];
  let sandbox: Sandbox;

  beforeAll(async () => {
    sandbox = await startSandbox({ seed: world.seed });
    recordSecrets(RUN_ID, [world.credentials.clientSecret, world.webhookSecret]);
    await Promise.all(
      topologies.map(async (t) => {
        t.db = await createTestDatabase();
        await installVersionLog(t.db.sql);
        const env = loopsSyncEnv({
          databaseUrl: t.db.url,
          api: sandbox,
          credentials: world.credentials,
          webhookSecrets: [world.webhookSecret],
          // Small pools: seven processes share the test server with the other suites.
          extra: { WORKER_CONCURRENCY: "2", DATABASE_POOL_SIZE: "2", ADMIN_PORT: "0" },
        });
        const receivers = Array.from({ length: t.receivers }, (_, n) =>
          procs.spawn({ name: `${RUN_ID}-${t.name}-receiver-${n + 1}`, args: ["receiver"], env }),
        );
        const workers = Array.from({ length: t.workers }, (_, n) =>
          procs.spawn({ name: `${RUN_ID}-${t.name}-worker-${n + 1}`, args: ["worker"], env }),
        );
        t.urls = await Promise.all(receivers.map((r) => receiverUrlOf(r, 60_000)));
        await Promise.all(workers.map((w) => w.waitForLine(/"msg":"worker started"/, 60_000)));
      }),
    );
  }, 90_000);

  afterAll(async () => {
    await procs.killAll();
    await sandbox?.close();
    await Promise.all(topologies.map((t) => t.db?.drop()));
  }, 30_000);

  /** Sends one event as Loops signs it to receiver `i % n` of each topology; every third also to the others. */
  async function deliver(event: object & { id: string }, i: number): Promise<void> {
    const body = JSON.stringify(event);
    const headers = {
      ...signWebhook({ id: event.id, timestamp: new Date(), body, secrets: [world.webhookSecret] }),
      "content-type": "application/json",
    };
    const sends = topologies.flatMap((t) => {
      const first = i % t.urls.length;
      const targets = i % 3 === 0 ? [first, (first + 1) % t.urls.length] : [first];
      return targets.map(async (r) => {
        const res = await fetch(`${t.urls[r]}/webhooks/loops`, { method: "POST", headers, body });
        expect(res.status, `${t.name} receiver ${r + 1} answered ${await res.text()}`).toBeLessThan(300);
      });
    });
    await Promise.all(sends);
  }

  it("applies the same versions exactly, once, never backwards", { timeout: 90_000 }, async () => {
    const ids: string[] = [];
    const sent = new Set<string>();
    let webhooks = 0;
    for (let round = 0; round < ROUNDS; round++) {
      for (let n = 0; n < ORDERS; n++) {
        if (round === 0) {
          ids.push(sandbox.createOrder({ merchantId: world.merchantIds[n % world.merchantIds.length]! }).id);
        } else {
          sandbox.advanceOrder(ids[n]!);
        }
      }
      // Deliver this round while the workers may still be fetching the last one: their GETs race the changes.
      const fresh = sandbox.truth.events().filter((e) => !sent.has(e.id));
      for (let k = 0; k < fresh.length; k += 20) {
        await Promise.all(
          fresh.slice(k, k + 20).map((e, j) => {
            sent.add(e.id);
            webhooks += (k + j) % 3 === 0 ? 2 : 1;
            return deliver(e, k + j);
          }),
        );
      }
    }
    expect(sent.size).toBe(ORDERS * ROUNDS);

    const truth = sandbox.truth.orders().filter((o) => ids.includes(o.id));
    const replicas: unknown[] = [];
    for (const t of topologies) {
      const sql = t.db!.sql;
      let problems: string[] = [];
      await waitFor(
        async () => {
          problems = await compareReplicaWithTruth(sql, truth);
          return problems.length === 0;
        },
        { timeoutMs: 60_000, intervalMs: 250, what: `${t.name}: the replica to equal the truth` },
      ).catch((error: Error) => {
        throw new Error(
          `${error.message}; ${problems.length} differences: ${problems.slice(0, 5).join("; ")}`,
        );
      });
      const stored = await sql<
        { id: string }[]
      >`select id from sync.events where id = any(${[...sent]}::text[])`;
      expect(stored.length, `${t.name}: events stored once each`).toBe(sent.size);
      const log = await checkVersionLog(sql);
      expect(log.backwards, `${t.name}: versions that went backwards`).toEqual([]);
      expect(log.twice, `${t.name}: versions applied twice`).toEqual([]);
      replicas.push(
        await sql`select id, version, status, raw from replica.orders order by id`.then((rows) => [...rows]),
      );
    }
    expect(replicas[1], "2+3 replica equals the 1+1 replica").toEqual(replicas[0]);
    expect((replicas[0] as unknown[]).length).toBe(ORDERS);
    expect(webhooks).toBeGreaterThan(sent.size);
    for (const p of procs.running()) expect(p.alive(), `${p.name} still running`).toBe(true);
    expect(procs.running()).toHaveLength(7);
  });
});
