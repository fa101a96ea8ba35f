// Forwarding across real `loops-sync worker` processes: two share the queue, one is killed -9 while its changes
// are in flight, a third starts; the endpoint (a real HTTP server verifying with standardwebhooks) still gets
// every change, in order per resource, never from two places at once, with few duplicates. The processes' logs
// never show FORWARD_SECRET or the token in FORWARD_URL's query.

import { spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { type ForwardEndpoint, startForwardEndpoint } from "#testkit/forward-endpoint";
import { REPO_ROOT, recordSecrets } from "#testkit/processes";
import { waitFor } from "#testkit/wait-for";
import { expectEveryChangeDelivered, writeChanges } from "../support/forward-changes.ts";
import { workerWorld } from "../support/worker-world.ts";

const RUN_ID = `forward-killed-${randomBytes(4).toString("hex")}`;
const SECRET = `whsec_${randomBytes(24).toString("base64")}`;

describe("forwarding by worker processes, one killed -9 mid-delivery", () => {
  const w = workerWorld(RUN_ID, "forward");
  let endpoint: ForwardEndpoint | undefined;
  afterAll(async () => {
    await endpoint?.close();
  });

  it("delivers every change once the killed worker's leases expire", { timeout: 120_000 }, async () => {
    const { db } = w;
    // Answers take a while, so changes are in flight when the worker dies.
    endpoint = await startForwardEndpoint({ secret: SECRET, answerDelayMs: 150 });
    recordSecrets(`${RUN_ID}-forward`, [SECRET, "query-token"]);
    // Forward every change from the start, those of the workers' own resource refresh included.
    await db.sql`insert into sync.forward_progress (scanned_through) values (0)`;
    const env = w.env({
      FORWARD_URL: endpoint.url,
      FORWARD_SECRET: SECRET,
      FORWARD_TIMEOUT_MS: "1000",
      CATCHUP_CRON: "0 0 1 1 *",
    });
    const spawnWorker = (n: number) =>
      w.procs.spawn({ name: `${RUN_ID}-worker-${n}`, args: ["worker"], env });
    const first = spawnWorker(1);
    const second = spawnWorker(2);
    await Promise.all([first, second].map((p) => p.waitForLine(/"msg":"forwarding started"/, 60_000)));

    await writeChanges(db.sql, { resources: 60, perResource: 30, perTransaction: 30 });
    await waitFor(() => endpoint!.requests.length >= 120, { timeoutMs: 60_000, what: "120 requests" });
    // bin/loops-sync execs Node, so the lease holder's name carries this pid.
    const heldByFirst = async () =>
      (
        await db.sql<{ n: number }[]>`
          select count(*)::int as n from sync.forward_deliveries
          where leased_until > now() and leased_by like ${`%:${first.pid}:%`}`
      )[0]!.n;
    // Killed while it holds leases: on a loaded machine the other worker may hold them all for a moment.
    await waitFor(async () => (await heldByFirst()) > 0, {
      timeoutMs: 30_000,
      intervalMs: 5,
      what: "leases",
    });
    await first.kill("SIGKILL");
    expect(await heldByFirst(), "changes the killed worker held").toBeGreaterThan(0);
    const third = spawnWorker(3);
    await third.waitForLine(/"msg":"forwarding started"/, 60_000);

    const positions = await waitFor(
      async () => {
        const [queue] = await db.sql<{ left: number; behind: boolean }[]>`
          select (select count(*) from sync.forward_deliveries)::int as left,
                 (select scanned_through from sync.forward_progress)
                   < (select coalesce(max(position), 0) from replica.changes) as behind`;
        if (queue!.left > 0 || queue!.behind) return undefined;
        return (await db.sql<{ position: number }[]>`select position from replica.changes order by 1`).map(
          (r) => r.position,
        );
      },
      { timeoutMs: 60_000, what: "the delivery queue drained" },
    );
    expect(positions.length).toBeGreaterThanOrEqual(1800);
    // FORWARD_TIMEOUT_MS is 1 s: on a loaded machine the endpoint (in this process) can hold an answer longer.
    const duplicates = expectEveryChangeDelivered(endpoint, positions, { timeoutMs: 1000 });
    expect(duplicates).toBeLessThanOrEqual(0.05);

    await Promise.all([second, third].map((p) => p.kill("SIGTERM")));
    for (const p of [first, second, third]) {
      const log = readFileSync(p.logFile, "utf8");
      expect(log).toContain('"msg":"forwarding started"');
      expect(log).not.toContain(SECRET);
      expect(log).not.toContain(SECRET.slice("whsec_".length));
      expect(log).not.toContain("query-token");
    }
  });

  it("refuses a bad FORWARD_SECRET at start: one line, exit 2, the secret not repeated", () => {
    const result = spawnSync(path.join(REPO_ROOT, "bin", "loops-sync"), ["worker"], {
      encoding: "utf8",
      env: {
        ...w.env({ FORWARD_URL: "http://127.0.0.1:9/x", FORWARD_SECRET: "whsec_not base64!" }),
        LOG_LEVEL: "silent",
      },
      timeout: 20_000,
    });
    expect(result.status).toBe(2);
    expect(result.stderr.trim()).toBe(
      "loops-sync: FORWARD_SECRET: got a value of 17 characters (hidden), expected a whsec_… secret (whsec_ followed by base64), or several separated by spaces",
    );
  });

  it("refuses FORWARD_URL without FORWARD_SECRET, and a FORWARD_URL that is not http(s)", () => {
    const run = (extra: Record<string, string>) =>
      spawnSync(path.join(REPO_ROOT, "bin", "loops-sync"), ["worker"], {
        encoding: "utf8",
        env: { ...w.env(extra), LOG_LEVEL: "silent" },
        timeout: 20_000,
      });
    const unset = run({ FORWARD_URL: "http://127.0.0.1:9/x" });
    expect(unset.status).toBe(2);
    expect(unset.stderr.trim()).toMatch(
      /^loops-sync: FORWARD_SECRET: got nothing \(unset\), expected a whsec_/,
    );
    const ftp = run({ FORWARD_URL: "ftp://partner.example/x?token=abc", FORWARD_SECRET: SECRET });
    expect(ftp.status).toBe(2);
    expect(ftp.stderr.trim()).toBe(
      "loops-sync: FORWARD_URL: got a value of 33 characters (hidden), expected an http(s) URL",
    );
  });
});
