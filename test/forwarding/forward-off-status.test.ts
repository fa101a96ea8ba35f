// Forwarding turned off is shown as off: after the last forwarder stopped (as `demo --forward` followed by a
// plain `demo` on the same data does) or when none recorded itself for a minute (workers killed), `status`
// and the status API say `off` with the changes waiting, rather than the last endpoint's "ok".

import { createLogger } from "@loops-sync/config";
import { needsAttention, readSyncStatus } from "@loops-sync/status";
import { startForwarder } from "@loops-sync/worker";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ForwardEndpoint, startForwardEndpoint } from "#testkit/forward-endpoint";
import { waitFor } from "#testkit/wait-for";
import { createTestDatabase, type TestDatabase } from "../support/db.ts";
import { writeChanges } from "../support/forward-changes.ts";
import { runCli } from "../support/operator-run.ts";

const SECRET = `whsec_${Buffer.from("forward-off-status-test-secret-3").toString("base64")}`;
const logger = createLogger({ name: "forward-test", level: process.env.TEST_LOG ? "debug" : "silent" });

describe("forwarding that no worker runs", () => {
  let db: TestDatabase;
  let endpoint: ForwardEndpoint;
  beforeAll(async () => {
    db = await createTestDatabase();
    endpoint = await startForwardEndpoint({ secret: SECRET });
  });
  afterAll(async () => {
    await endpoint?.close();
    await db?.drop();
  });

  it("is `off` once the last forwarder stopped, with the changes that wait", {
    timeout: 120_000,
  }, async () => {
    const forwarder = await startForwarder({ sql: db.sql, url: endpoint.url, secret: SECRET, logger });
    const delivered = await writeChanges(db.sql, { resources: 2, perResource: 1 });
    await waitFor(() => endpoint.accepted().length === delivered.length, { what: "the first changes" });
    await waitFor(async () => (await readSyncStatus(db.sql)).forwarding?.state === "ok", {
      what: "forwarding ok",
    });
    await forwarder.stop(1000);

    const waiting = await writeChanges(db.sql, { resources: 3, perResource: 1 });
    const status = await readSyncStatus(db.sql);
    expect(status.forwarding).toMatchObject({
      state: "off",
      forwarderSeenAt: null,
      undelivered: waiting.length,
    });
    const attention = needsAttention(status, 300);
    expect(attention.map((i) => i.kind)).toContain("forward_off");
    expect(attention.find((i) => i.kind === "forward_off")?.detail).toContain(
      `${waiting.length} change(s) wait for ${endpoint.url.replace(/\?.*$/, "")}`,
    );

    const printed = await runCli(["status"], { DATABASE_URL: db.url }, 120_000);
    expect(printed.code).toBe(1);
    expect(printed.stdout).toContain(
      `forwarding to ${endpoint.url.replace(/\?.*$/, "")}: off (no running worker has FORWARD_URL; the last one stopped); ${waiting.length} undelivered`,
    );
    const json = await runCli(["status", "--json"], { DATABASE_URL: db.url }, 120_000);
    expect(JSON.parse(json.stdout).forwarding.state).toBe("off");
  });

  it("is `off` when no forwarder recorded itself for a minute (killed), and back on with one", async () => {
    await db.sql`update sync.forward_progress set seen_at = now() - interval '61 seconds'`;
    expect((await readSyncStatus(db.sql)).forwarding?.state).toBe("off");
    await db.sql`update sync.forward_progress set seen_at = now() - interval '30 seconds'`;
    expect((await readSyncStatus(db.sql)).forwarding?.state).not.toBe("off");
    const forwarder = await startForwarder({ sql: db.sql, url: endpoint.url, secret: SECRET, logger });
    try {
      await waitFor(async () => (await readSyncStatus(db.sql)).forwarding?.undelivered === 0, {
        timeoutMs: 60_000,
        what: "the waiting changes delivered",
      });
      const status = await readSyncStatus(db.sql);
      expect(status.forwarding?.state).toBe("ok");
      expect(needsAttention(status, 300).map((i) => i.kind)).not.toContain("forward_off");
    } finally {
      await forwarder.stop(1000);
    }
  });
});
