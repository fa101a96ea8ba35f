// Forwarding turned off does not hold the feed for ever: what it never received is kept for RETENTION_DAYS
// while no forwarder runs, then `loops-sync prune` deletes it like any change; status says so meanwhile.

import { createLogger } from "@loops-sync/config";
import { needsAttention, readSyncStatus } from "@loops-sync/status";
import { startForwarder } from "@loops-sync/worker";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ForwardEndpoint, startForwardEndpoint } from "#testkit/forward-endpoint";
import { waitFor } from "#testkit/wait-for";
import { createTestDatabase, type TestDatabase } from "../support/db.ts";
import { runCli } from "../support/operator-run.ts";

const SECRET = `whsec_${Buffer.from("forward-off-prune-test-secret-01").toString("base64")}`;
const logger = createLogger({ name: "forward-test", level: process.env.TEST_LOG ? "debug" : "silent" });

describe("forwarding turned off, and prune", () => {
  let db: TestDatabase;
  let endpoint: ForwardEndpoint;
  const prune = async () => {
    const run = await runCli(["prune", "--json"], { DATABASE_URL: db.url, RETENTION_DAYS: "30" }, 120_000);
    expect({ code: run.code, stderr: run.stderr }).toMatchObject({ code: 0 });
    return JSON.parse(run.stdout) as { changesDeleted: number };
  };
  beforeAll(async () => {
    db = await createTestDatabase();
    // An endpoint that never takes anything: every change stays undelivered.
    endpoint = await startForwardEndpoint({ secret: SECRET, answer: () => ({ status: 503 }) });
  });
  afterAll(async () => {
    await endpoint?.close();
    await db?.drop();
  });

  it("keeps what a running forwarder has not delivered, and prunes it after RETENTION_DAYS once off", {
    timeout: 240_000,
  }, async () => {
    const forwarder = await startForwarder({
      sql: db.sql,
      url: endpoint.url,
      secret: SECRET,
      pollIntervalMs: 200,
      // Not dead at forty days: the endpoint is down, the changes wait.
      maxAgeHours: 24 * 60,
      logger,
    });
    // Forty days of feed the endpoint never received: past RETENTION_DAYS, as if the clock had moved on.
    await db.sql`
      insert into replica.changes (resource, resource_id, merchant_id, operation, source, changed_at)
      select 'order', 'ord_' || i, 'mer_1', 'update', 'webhook', now() - interval '40 days' + i * interval '1 s'
      from generate_series(1, 40) as i order by i`;
    await waitFor(
      async () =>
        (await db.sql`select 1 from sync.forward_deliveries`).length === 40 && endpoint.requests.length > 0,
      { timeoutMs: 60_000, what: "the feed scanned and a delivery tried" },
    );
    expect((await prune()).changesDeleted).toBe(0);

    await forwarder.stop(1000);
    const status = await readSyncStatus(db.sql);
    expect(status.forwarding).toMatchObject({ state: "off", undelivered: 40 });
    expect(needsAttention(status, 300).find((i) => i.kind === "forward_off")?.detail).toContain(
      "kept for RETENTION_DAYS and then pruned",
    );
    const printed = await runCli(["status"], { DATABASE_URL: db.url }, 120_000);
    expect(printed.stdout).toContain("40 undelivered, kept for RETENTION_DAYS, then pruned");

    expect((await prune()).changesDeleted).toBe(40);
    expect(await db.sql`select position from replica.changes`).toEqual([]);
  });
});
