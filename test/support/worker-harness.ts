import { type EventEnvelope, storeEventsAndEnqueue } from "@loops-sync/db";
import type { LoopsClient } from "@loops-sync/loops-client";
import { DEFAULT_SANDBOX_CREDENTIALS, type Sandbox, startSandbox } from "@loops-sync/sandbox";
import { type RunningWorker, type StartWorkerOptions, startWorker } from "@loops-sync/worker";
import { createTestDatabase, type TestDatabase } from "./db.ts";
import { sandboxClient } from "./sandbox-client.ts";

export interface Harness {
  db: TestDatabase;
  sandbox: Sandbox;
  client: LoopsClient;
  /** Workers started so far (stopping one twice is harmless). */
  workers: RunningWorker[];
  /** Starts a worker on this database and sandbox; every one started is stopped by close(). */
  worker(options?: Partial<StartWorkerOptions>): Promise<RunningWorker>;
  /** Stores the sandbox's events (all, or those matching) through the inbox, as the receiver would. */
  ingest(filter?: (event: EventEnvelope) => boolean, applicationId?: string): Promise<string[]>;
  /** GET calls the sandbox answered for `route` (e.g. "GET /orders/{order_id}") since the last reset. */
  calls(route: string): number;
  close(): Promise<void>;
}

export const APPLICATION_ID = DEFAULT_SANDBOX_CREDENTIALS.applicationId;

/** A migrated database of this file's own, a sandbox on loopback and a client of it. */
export async function createHarness(): Promise<Harness> {
  const db = await createTestDatabase();
  const sandbox = await startSandbox({ port: 0 });
  const client = sandboxClient(sandbox, {
    // 429s surface at once, so the worker pauses the merchant instead of holding a slot.
    retry: { maxRetryAfterSeconds: 0, maxAttempts: 2, baseDelayMs: 20, maxDelayMs: 100 },
    timeoutMs: 5000,
  });
  const workers: RunningWorker[] = [];
  const ingested = new Set<string>();
  return {
    db,
    sandbox,
    client,
    workers,
    async worker(options = {}) {
      const worker = await startWorker({
        databaseUrl: db.url,
        sql: db.sql,
        client,
        applicationId: APPLICATION_ID,
        concurrency: 4,
        pollIntervalMs: 100,
        refreshResourcesAtStart: false,
        // Configured, as in most deployments: a merchant first learned from a webhook is confirmed and then
        // reconciled in full (test/worker/confirm-merchant.test.ts), work most tests here do not count on.
        merchantIds: sandbox.merchantIds,
        // Once a year: a periodic refresh landing mid-test would add calls the tests count.
        resourcesCron: "0 0 1 1 *",
        ...options,
      });
      workers.push(worker);
      return worker;
    },
    async ingest(filter = () => true, applicationId = APPLICATION_ID) {
      const events = (sandbox.truth.events() as unknown as EventEnvelope[]).filter(
        (e) => !ingested.has(e.id) && filter(e),
      );
      for (const e of events) ingested.add(e.id);
      if (events.length === 0) return [];
      await db.sql.begin((tx) => storeEventsAndEnqueue(tx, events, { source: "webhook", applicationId }));
      return events.map((e) => e.id);
    },
    calls(route) {
      return sandbox.stats().apiCalls[route] ?? 0;
    },
    async close() {
      await Promise.all(workers.map((w) => w.stop()));
      await sandbox.close();
      await db.drop();
    },
  };
}

/** Outcomes of stored events, by id. */
export async function outcomes(db: TestDatabase, ids: readonly string[]): Promise<Record<string, string>> {
  const rows = await db.sql<{ id: string; outcome: string }[]>`
    select id, outcome from sync.events where id = any(${[...ids]}::text[])`;
  return Object.fromEntries(rows.map((r) => [r.id, r.outcome]));
}

/** True when none of the events is pending any more. */
export async function settled(db: TestDatabase, ids: readonly string[]): Promise<boolean> {
  const [row] = await db.sql<{ n: number }[]>`
    select count(*)::int as n from sync.events where id = any(${[...ids]}::text[]) and outcome = 'pending'`;
  return row!.n === 0;
}
