// graphile-worker can end a run by itself (a breaking migration of its schema, a pool that lost every
// worker). A run that ends while startSupervisedRunner is still starting it must be reported like any other
// end, not throw inside a promise callback (it read `stopping` before its declaration ran).
import { EventEmitter } from "node:events";
import { createLogger } from "@loops-sync/config";
import { graphileLogger } from "@loops-sync/worker/jobs/graphile-logger";
import { createPoolRegistry } from "@loops-sync/worker/jobs/pool-registry";
import { createQueuePool } from "@loops-sync/worker/jobs/queue-pool";
import {
  type SupervisedRunnerOptions,
  startSupervisedRunner,
} from "@loops-sync/worker/jobs/supervised-runner";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { waitFor } from "#testkit/wait-for";
import { createTestDatabase, type TestDatabase } from "../support/db.ts";

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase();
});
afterAll(async () => {
  await db?.drop();
});

describe("a supervised run that ends during start", () => {
  it("is reported once through onEnd, and nothing escapes as an unhandled rejection", async () => {
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown) => unhandled.push(reason);
    process.on("unhandledRejection", onUnhandled);
    const logger = createLogger({ name: "test", level: "silent" });
    const pools = createPoolRegistry({ sql: db.sql, logger });
    const pgPool = createQueuePool({ connectionString: db.url, max: 3, graceMs: 1000, logger });
    const events: SupervisedRunnerOptions["options"]["events"] = new EventEmitter();
    // Ends the run the moment its pool exists: while start() still registers the pool.
    events.on("pool:create", ({ workerPool }) => {
      void workerPool.gracefulShutdown("ended during start");
    });
    const ends: unknown[] = [];
    try {
      const runner = await startSupervisedRunner({
        options: {
          pgPool,
          events,
          concurrency: 1,
          noHandleSignals: true,
          pollInterval: 100,
          taskList: {},
          logger: graphileLogger(logger),
        },
        pools,
        logger,
        onEnd: (error) => ends.push(error),
      });
      await waitFor(() => ends.length > 0, { what: "the run's end reported" });
      await runner.stop();
      // A tick for a rejection from the run's end to surface.
      await new Promise((r) => setTimeout(r, 50));
      expect(ends).toEqual([undefined]);
      expect(unhandled).toEqual([]);
    } finally {
      process.off("unhandledRejection", onUnhandled);
      await pools.close();
      await pgPool.end();
    }
  });
});
