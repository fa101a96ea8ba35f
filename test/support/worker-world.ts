import { type Sandbox, startSandbox } from "@loops-sync/sandbox";
import { afterAll, beforeAll } from "vitest";
import { loopsSyncEnv, ProcessGroup, recordSecrets } from "#testkit/processes";
import { chaosSeed } from "./chaos-seed.ts";
import { createTestDatabase, type TestDatabase } from "./db.ts";

/**
 * For a describe block of `loops-sync` child processes: a database and a sandbox of two merchants for the
 * block (made in beforeAll, removed with the processes in afterAll), and the environment that points a
 * child at them. The secrets are recorded under `runId` for the secrets suite.
 */
export function workerWorld(runId: string, label: string) {
  const procs = new ProcessGroup();
  const world = chaosSeed({ merchants: 2, label });
  let db: TestDatabase | undefined;
  let sandbox: Sandbox | undefined;
  beforeAll(async () => {
    db = await createTestDatabase();
    sandbox = await startSandbox({ seed: world.seed });
    recordSecrets(runId, [world.credentials.clientSecret, world.webhookSecret]);
  });
  afterAll(async () => {
    await procs.killAll();
    await sandbox?.close();
    await db?.drop();
  }, 30_000);
  return {
    procs,
    world,
    get db(): TestDatabase {
      return db!;
    },
    get sandbox(): Sandbox {
      return sandbox!;
    },
    env(extra: Record<string, string> = {}): Record<string, string> {
      return loopsSyncEnv({
        databaseUrl: db!.url,
        api: sandbox!,
        credentials: world.credentials,
        webhookSecrets: [world.webhookSecret],
        extra,
      });
    },
  };
}
