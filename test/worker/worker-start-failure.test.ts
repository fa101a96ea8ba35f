// A worker whose start fails halfway (here: its forwarder refuses its options) stops what it had started,
// last first, and leaves nothing running: no job runner holding queue connections, no budget-pressure timer
// reading the request budget every second.
import { Writable } from "node:stream";
import { createLogger } from "@loops-sync/config";
import { connect } from "@loops-sync/db";
import { type Sandbox, startSandbox } from "@loops-sync/sandbox";
import { startWorker } from "@loops-sync/worker";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "../support/db.ts";
import { sandboxClient } from "../support/sandbox-client.ts";

let db: TestDatabase;
let sandbox: Sandbox;
beforeAll(async () => {
  db = await createTestDatabase();
  sandbox = await startSandbox({ port: 0 });
});
afterAll(async () => {
  await sandbox?.close();
  await db?.drop();
});

describe("a worker whose forwarder fails to start", () => {
  it("rejects with the forwarder's error and leaves no runner, queue connection or timer behind", async () => {
    const lines: { msg: string }[] = [];
    const destination = new Writable({
      write(chunk, _encoding, done) {
        lines.push(JSON.parse(String(chunk)));
        done();
      },
    });
    const logger = createLogger({ name: "worker", level: "debug", pretty: false, destination });
    const sql = connect(db.url, { max: 4 });
    await expect(
      startWorker({
        databaseUrl: db.url,
        sql,
        client: sandboxClient(sandbox),
        logger,
        refreshResourcesAtStart: false,
        maxRps: 20,
        forward: { url: "http://127.0.0.1:9/changes", secret: "whsec_dGVzdA==", maxInFlight: 0 },
      }),
    ).rejects.toThrow(/maxInFlight must be a whole number/);
    // The queue's pool is closed: no connection of graphile-worker's is left.
    const [queue] = await db.sql<{ n: number }[]>`
      select count(*)::int as n from pg_stat_activity
      where datname = current_database() and application_name = 'loops-sync-worker'`;
    expect(queue!.n).toBe(0);
    // A budget-pressure timer left running reads the request budget every second; with its pool ended, each
    // reading fails and says so at debug.
    await sql.end();
    const before = lines.length;
    await new Promise((r) => setTimeout(r, 2500));
    expect(lines.slice(before).map((l) => l.msg)).not.toContain(
      "could not read the request budget; keeping the last reading",
    );
  });
});
