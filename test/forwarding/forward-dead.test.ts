// Changes the endpoint never acknowledges die after FORWARD_MAX_AGE_HOURS: counted in the metrics, listed by
// `loops-sync status` (exit 1) and the status API, and sent again by `loops-sync forward retry --dead`.

import { Writable } from "node:stream";
import { createLogger } from "@loops-sync/config";
import { needsAttention, readSyncStatus } from "@loops-sync/status";
import { createWorkerMetrics, type Forwarder, startForwarder } from "@loops-sync/worker";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ForwardEndpoint, startForwardEndpoint } from "#testkit/forward-endpoint";
import { waitFor } from "#testkit/wait-for";
import { createTestDatabase, type TestDatabase } from "../support/db.ts";
import { expectEveryChangeDelivered, writeChanges } from "../support/forward-changes.ts";
import { runCli } from "../support/operator-run.ts";

const SECRET = `whsec_${Buffer.from("forward-dead-test-secret-0123456").toString("base64")}`;

describe("dead forwarded changes", () => {
  let db: TestDatabase;
  let endpoint: ForwardEndpoint;
  let forwarder: Forwarder;
  // The worker's registry, as `loops-sync worker` serves it on /metrics.
  const { registry } = createWorkerMetrics();
  const logLines: string[] = [];
  beforeAll(async () => {
    db = await createTestDatabase();
    endpoint = await startForwardEndpoint({ secret: SECRET, failRate: 1 });
    forwarder = await startForwarder({
      sql: db.sql,
      url: endpoint.url,
      secret: SECRET,
      // Dead one second after the commit: the first failures already come too late.
      maxAgeHours: 1 / 3600,
      retryBaseMs: 300,
      pollIntervalMs: 200,
      registry,
      logger: createLogger({
        name: "forward-test",
        level: "debug",
        pretty: false,
        destination: new Writable({
          write(chunk, _encoding, done) {
            logLines.push(String(chunk));
            done();
          },
        }),
      }),
    });
  });
  afterAll(async () => {
    await forwarder?.stop(1000);
    await endpoint?.close();
    await db?.drop();
  });

  it("are counted, listed, and sent again by forward retry --dead", { timeout: 90_000 }, async () => {
    const positions = await writeChanges(db.sql, { resources: 3, perResource: 2 });
    await waitFor(
      async () => {
        const [row] = await db.sql<{ n: number }[]>`
          select count(*)::int as n from sync.forward_deliveries where dead_at is not null`;
        return row?.n === positions.length;
      },
      { timeoutMs: 30_000, what: "every change dead" },
    );
    const metrics = await registry.metrics();
    expect(metrics).toMatch(new RegExp(`^loops_sync_forward_dead_total ${positions.length}$`, "m"));
    expect(metrics).toMatch(new RegExp(`^loops_sync_forward_dead_changes ${positions.length}$`, "m"));
    expect(metrics).toMatch(/^loops_sync_forward_failed_attempts_total\{kind="status"\} [1-9]/m);

    const status = await readSyncStatus(db.sql);
    expect(status.forwarding).toMatchObject({
      endpoint: endpoint.url.replace(/\?.*$/, ""),
      state: "failing",
      dead: positions.length,
      lastFailure: "HTTP 500: injected failure",
    });
    expect(status.forwarding?.deadChanges.map((d) => d.webhookId)).toEqual(positions.map((p) => `chg_${p}`));
    expect(needsAttention(status, 300).map((i) => i.kind)).toContain("forward_dead");

    const printed = await runCli(["status"], { DATABASE_URL: db.url });
    expect(printed.code).toBe(1);
    expect(printed.stdout).toContain(`forwarding to ${endpoint.url.replace(/\?.*$/, "")}: failing`);
    expect(printed.stdout).toContain(`dead chg_${positions[0]} channel chn_0`);
    expect(printed.stdout).not.toContain("query-token");

    endpoint.setFailRate(0);
    const waiting = await runCli(["forward", "retry", "--json"], { DATABASE_URL: db.url });
    expect(waiting.code).toBe(0);
    expect(JSON.parse(waiting.stdout)).toEqual({ retried: 0, positions: [], dead: false, superseded: [] });
    const retried = await runCli(["forward", "retry", "--dead", "--json"], { DATABASE_URL: db.url });
    expect(retried.code).toBe(0);
    expect(JSON.parse(retried.stdout)).toEqual({
      retried: positions.length,
      positions,
      dead: true,
      superseded: [],
    });

    await waitFor(() => new Set(endpoint.accepted().map((r) => r.position)).size === positions.length, {
      timeoutMs: 30_000,
      what: "the revived changes accepted",
    });
    expectEveryChangeDelivered(endpoint, positions, { order: "accepted" });
    await waitFor(async () => (await readSyncStatus(db.sql)).forwarding?.dead === 0, {
      what: "no dead change",
    });
    expect((await runCli(["status"], { DATABASE_URL: db.url })).code).toBe(0);

    // Failures and deaths were logged, and never with the secret or the URL's query.
    const log = logLines.join("");
    expect(log).toContain('"msg":"forwarding attempt failed"');
    expect(log).toContain('"msg":"forwarded changes are dead"');
    for (const secret of [SECRET, SECRET.slice("whsec_".length), "query-token"])
      expect(log).not.toContain(secret);
  });
});
