import type { LoopsClient } from "@loops-sync/loops-client";
import { type Sandbox, startSandbox } from "@loops-sync/sandbox";
import { loopsApiEnv } from "#testkit/processes";
import { createTestDatabase, type TestDatabase } from "./db.ts";
import { type StartedLoopsSync, startLoopsSync } from "./loops-sync-start.ts";
import { type RunResult, runCli } from "./operator-run.ts";
import { sandboxClient } from "./sandbox-client.ts";

/** The sandbox, a database, `loops-sync start` on both (a child process) and helpers to look at the mirror. */
export interface MirrorWorld {
  db: TestDatabase;
  sandbox: Sandbox;
  started: StartedLoopsSync;
  /** Our application's client of the sandbox: what it writes comes back as self-originated events. */
  client: LoopsClient;
  menuVersion(brandId: string): Promise<number | undefined>;
  productRefs(brandId: string): Promise<string[]>;
  /** `loops-sync refresh …` as its own process. */
  refresh(...args: string[]): Promise<RunResult>;
  /** A call to the sandbox's admin API (what the portal or Loops itself does). */
  admin(path: string, method: string, body: unknown): Promise<{ status: number; body: { id: string } }>;
  close(): Promise<void>;
}

export async function startMirrorWorld(): Promise<MirrorWorld> {
  const db = await createTestDatabase();
  const sandbox = await startSandbox({ port: 0, jobStepMs: 20 });
  const client = sandboxClient(sandbox, {});
  const started = await startLoopsSync({
    databaseUrl: db.url,
    sandbox,
    // A year away: only the reconcile at start and `refresh` run.
    env: {
      LOOPS_MERCHANT_IDS: sandbox.merchantIds.join(","),
      RECONCILE_CRON: "0 0 1 1 *",
      LOG_LEVEL: "warn",
    },
  });
  return {
    db,
    sandbox,
    started,
    client,
    async menuVersion(brandId) {
      const [row] = await db.sql<{ version: number }[]>`
        select version from replica.menus where brand_id = ${brandId}`;
      return row?.version;
    },
    async productRefs(brandId) {
      const rows = await db.sql<{ external_ref: string }[]>`
        select external_ref from replica.menu_products where brand_id = ${brandId} order by external_ref`;
      return rows.map((r) => r.external_ref);
    },
    refresh: (...args) =>
      runCli(["refresh", ...args], { DATABASE_URL: db.url, ...loopsApiEnv(sandbox) }, 60_000),
    admin: (path, method, body) =>
      fetch(`${sandbox.url}/admin${path}`, {
        method,
        headers: { "content-type": "application/json" },
        body: JSON.stringify(body),
      }).then(async (r) => ({ status: r.status, body: (await r.json()) as { id: string } })),
    async close() {
      started.child.kill("SIGTERM");
      if (started.child.exitCode === null) await new Promise((r) => started.child.once("exit", r));
      await sandbox.close();
      await db.drop();
    },
  };
}
