// The upstream misbehaving: a real HTTP server stands in for the Loops API and answers an order refresh
// with malformed JSON, a wrong schema, another order's id, a negative version, huge strings, Arabic and
// mixed-direction text, SQL-looking values. The worker (real, on real Postgres) must either fail the job
// with an error naming what was wrong, or store the order exactly; the version already stored is never
// damaged by a bad answer.

import { randomBytes } from "node:crypto";
import { createWriteStream } from "node:fs";
import path from "node:path";
import { createLogger } from "@loops-sync/config";
import { connect, type EventEnvelope, type Sql, storeEventsAndEnqueue } from "@loops-sync/db";
import { LoopsClient } from "@loops-sync/loops-client";
import { applyOrderIfNewer } from "@loops-sync/replica";
import { type Order, startSandbox } from "@loops-sync/sandbox";
import { type RunningWorker, startWorker } from "@loops-sync/worker";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { compareReplicaWithTruth } from "#testkit/compare-replica";
import { LOG_DIR, recordSecrets } from "#testkit/processes";
import { waitFor } from "#testkit/wait-for";
import { createTestDatabase, type TestDatabase } from "../support/db.ts";
import { type HostileUpstream, startHostileUpstream } from "../support/hostile-upstream.ts";

const RUN_ID = `upstream-${randomBytes(4).toString("hex")}`;
const CLIENT_SECRET = `upstream-client-secret-${randomBytes(12).toString("hex")}`;
const MERCHANT = "mer_demo_1";

describe("worker against a misbehaving upstream", () => {
  let db: TestDatabase;
  let upstream: HostileUpstream;
  let worker: RunningWorker;
  let workerSql: Sql;
  let template: Order;
  let counter = 0;

  beforeAll(async () => {
    db = await createTestDatabase();
    // A realistic order to start from, straight from the sandbox.
    const sandbox = await startSandbox({ randomSeed: 7 });
    template = sandbox.createOrder({ merchantId: MERCHANT });
    await sandbox.close();
    upstream = await startHostileUpstream({ clientSecret: CLIENT_SECRET });
    recordSecrets(RUN_ID, [CLIENT_SECRET]);
    const logger = createLogger({
      name: "upstream-worker",
      level: "debug",
      destination: createWriteStream(path.join(LOG_DIR, `${RUN_ID}-worker.log`)),
    });
    const client = new LoopsClient({
      apiUrl: upstream.apiUrl,
      authUrl: upstream.authUrl,
      clientId: "upstream-client",
      clientSecret: CLIENT_SECRET,
      retry: { maxAttempts: 1 },
      logger,
    });
    workerSql = connect(db.url, { max: 4, applicationName: "upstream-worker" });
    worker = await startWorker({
      databaseUrl: db.url,
      // Its own pool, as in a worker process.
      sql: workerSql,
      client,
      applicationId: "app_loops_sync",
      concurrency: 4,
      logger,
      refreshResourcesAtStart: false,
      // Refreshes are scheduled 250 ms ahead and found by polling; keep each case short.
      pollIntervalMs: 200,
    });
  });

  afterAll(async () => {
    await worker?.stop();
    await workerSql?.end({ timeout: 5 });
    await upstream?.close();
    await db?.drop();
  });

  /** A stored v1 of a fresh order, then an event announcing v2 whose refresh gets `answer`. */
  async function refreshWith(answer: (order: Order) => unknown) {
    counter++;
    const id = `ord_hostile_${counter}_${randomBytes(3).toString("hex")}`;
    const v1: Order = { ...structuredClone(template), id, version: 1 };
    await applyOrderIfNewer(db.sql, v1);
    const v2: Order = { ...structuredClone(v1), version: 2, status: "accepted" };
    upstream.serve(id, answer(v2));
    const event: EventEnvelope = {
      id: `evt_hostile_${counter}_${randomBytes(3).toString("hex")}`,
      type: "order.status_changed",
      created_at: new Date().toISOString(),
      merchant_id: MERCHANT,
      location_id: v1.location_id,
      connection_id: v1.channel_connection_id,
      origin: { type: "channel", application_id: null },
      data: { order_id: id, channel_ref: v1.channel_ref, status: "accepted", version: 2 },
    };
    await db.sql.begin((tx) =>
      storeEventsAndEnqueue(tx, [event], { source: "cli", applicationId: "app_loops_sync" }),
    );
    const settled = await waitFor(
      async () => {
        const [e] = await db.sql<{ outcome: string; error: string | null }[]>`
          select outcome, error from sync.events where id = ${event.id}`;
        return e && e.outcome !== "pending" ? e : undefined;
      },
      { timeoutMs: 15_000, what: `the event of ${id} to settle` },
    ).catch(async (error: Error) => {
      const jobs = await db.sql`
        select task_identifier, attempts, last_error, run_at, locked_at, key from graphile_worker.jobs`;
      const activity = await db.sql`
        select state, wait_event_type, wait_event, left(query, 200) as query from pg_stat_activity
        where datname = current_database() and pid <> pg_backend_pid()`;
      throw new Error(
        `${error.message}; jobs: ${JSON.stringify(jobs)}; sessions: ${JSON.stringify(activity)}`,
      );
    });
    return { id, v1, v2, settled };
  }

  async function expectUntouched(v1: Order) {
    expect(await compareReplicaWithTruth(db.sql, [v1], { exhaustive: false })).toEqual([]);
  }

  // Runs first on purpose: no refresh_resources job at start, so this event's job is the worker's first.
  it("runs the first job a freshly started worker picks up (a well-formed order is applied)", async () => {
    const { v2, settled } = await refreshWith((o) => o);
    expect(settled.outcome, settled.error ?? "").toBe("applied");
    expect(await compareReplicaWithTruth(db.sql, [v2], { exhaustive: false })).toEqual([]);
  });

  it.each([
    ["malformed JSON", () => `{"id": "ord_x", "version": 2, "items": [`, /json|parse|body|response/i],
    [
      "a wrong schema",
      (o: Order) => ({ ...o, items: "three kebabs", totals: 12 }),
      /items|totals|schema|expected/i,
    ],
    ["another order's id", (o: Order) => ({ ...o, id: "ord_someone_else" }), /\bid\b/i],
    ["a negative version", (o: Order) => ({ ...o, version: -3 }), /version/i],
    ["a fractional version", (o: Order) => ({ ...o, version: 2.5 }), /version/i],
    ["JSON that is not an object", () => "[1,2,3]", /object|expected|response/i],
  ])("fails the job on %s, names the problem, and keeps the stored version", async (_what, answer, says) => {
    const { v1, settled } = await refreshWith(answer);
    expect(settled.outcome).toBe("failed");
    expect(settled.error).toMatch(says);
    await expectUntouched(v1);
    const [stray] = await db.sql`select id from replica.orders where id = 'ord_someone_else'`;
    expect(stray).toBeUndefined();
  });

  it.each([
    [
      "Arabic and mixed-direction text",
      (o: Order) => ({
        ...o,
        notes: "بدون بصل \u202Eplease\u202C – رقم الطلب ١٢٣ \u200F(mixed) \u2067عربي\u2069",
        items: o.items.map((i) => ({ ...i, name: { en: "Shawarma \u202Bعربي\u202C", ar: "شاورما دجاج" } })),
      }),
    ],
    [
      "SQL-looking values",
      (o: Order) => ({
        ...o,
        notes: "'); drop table replica.orders; --",
        channel_ref: "1' or '1'='1",
        items: o.items.map((i) => ({
          ...i,
          sku: "$$; delete from sync.events; $$",
          notes: "\\'; select pg_sleep(10); --",
        })),
      }),
    ],
    ["huge strings", (o: Order) => ({ ...o, notes: "ن".repeat(200_000), channel_ref: "R".repeat(5_000) })],
  ])("stores %s exactly as served", async (_what, answer) => {
    const { v2, settled } = await refreshWith(answer);
    expect(settled.outcome, settled.error ?? "").toBe("applied");
    const served = answer(v2) as Order;
    expect(await compareReplicaWithTruth(db.sql, [served], { exhaustive: false })).toEqual([]);
    // The SQL-looking values were data, nothing more: the tables are all still there and still full.
    const [{ n } = { n: 0 }] = await db.sql<{ n: number }[]>`select count(*)::int as n from replica.orders`;
    expect(n).toBe(counter);
  });

  it("fails cleanly on a NUL character Postgres cannot store in jsonb (not retried forever)", async () => {
    const { v1, settled } = await refreshWith((o) => ({ ...o, notes: "before\u0000after" }));
    expect(settled.outcome).toBe("failed");
    expect(settled.error).toMatch(/\\u0000|unsupported|null character|notes/i);
    await expectUntouched(v1);
  });
});
