// An application suspended by Loops while orders keep coming (against the sandbox, a real `loops-sync start`):
// calls pause instead of failing events, `status` and the admin listener say why, a probe finds the
// suspension lifted and every order converges with no command run. The probe backoff is shortened through
// PAUSE_PROBE_FIRST_SECONDS / PAUSE_PROBE_MAX_SECONDS so the test takes seconds, not minutes.

import { type Sandbox, startSandbox } from "@loops-sync/sandbox";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { compareReplicaWithTruth } from "#testkit/compare-replica";
import { loopsApiEnv } from "#testkit/processes";
import { waitFor } from "#testkit/wait-for";
import { createTestDatabase, type TestDatabase } from "../support/db.ts";
import { type StartedLoopsSync, startLoopsSync } from "../support/loops-sync-start.ts";
import { runCli } from "../support/operator-run.ts";

describe("a suspension of the application upstream", () => {
  let db: TestDatabase;
  let sandbox: Sandbox;
  let running: StartedLoopsSync;
  const admin = (path: "suspend" | "resume") =>
    fetch(`${sandbox.url}/admin/applications/${sandbox.credentials.applicationId}/${path}`, {
      method: "POST",
    });
  const count = async (query: string) => (await db.sql.unsafe<{ n: number }[]>(query))[0]!.n;

  beforeAll(async () => {
    db = await createTestDatabase();
    sandbox = await startSandbox({ port: 0 });
    running = await startLoopsSync({
      databaseUrl: db.url,
      sandbox,
      env: {
        PAUSE_PROBE_FIRST_SECONDS: "1",
        PAUSE_PROBE_MAX_SECONDS: "2",
        LOOPS_MERCHANT_IDS: sandbox.merchantIds.join(","),
      },
    });
  });
  afterAll(async () => {
    running?.child.kill("SIGTERM");
    await sandbox?.close();
    await db?.drop();
  });

  it("fails no event, says why while it lasts, and converges by itself afterwards", {
    timeout: 120_000,
  }, async () => {
    const [merchant] = sandbox.merchantIds;
    const before = Array.from({ length: 5 }, () => sandbox.createOrder({ merchantId: merchant! }));
    await waitFor(
      async () => (await count("select count(*)::int as n from replica.orders")) >= before.length,
      {
        timeoutMs: 30_000,
        what: "the orders made before the suspension in the replica",
      },
    );

    await admin("suspend");
    // Orders keep coming while suspended: their webhooks are stored, their fetches refused.
    const during = Array.from({ length: 10 }, () => sandbox.createOrder({ merchantId: merchant! }));
    for (const o of during.slice(0, 5)) sandbox.advanceOrder(o.id);
    await waitFor(async () => (await count("select count(*)::int as n from sync.upstream_pauses")) > 0, {
      timeoutMs: 30_000,
      what: "the application's calls to be paused",
    });
    const [pause] = await db.sql`select scope, cause from sync.upstream_pauses`;
    expect(pause).toMatchObject({ scope: "application", cause: "application_suspended" });

    const status = await runCli(["status"], { DATABASE_URL: db.url, ...loopsApiEnv(sandbox) });
    expect(status.code).toBe(1);
    expect(status.stdout).toMatch(/every call to Loops paused since .*application_suspended/);
    const metrics = await (await fetch(`${running.admin}/metrics`)).text();
    expect(metrics).toMatch(
      /loops_sync_upstream_paused\{scope="application",cause="application_suspended"\} 1/,
    );
    const api = (await (await fetch(`${running.admin}/status/api`)).json()) as {
      recovery: { pauses: { scope: string; cause: string }[] };
    };
    expect(api.recovery.pauses).toMatchObject([{ scope: "application", cause: "application_suspended" }]);
    // At least one probe was refused while suspended (the backoff moves on), and still nothing failed.
    await waitFor(async () => (await count("select max(probes)::int as n from sync.upstream_pauses")) >= 1, {
      timeoutMs: 30_000,
      what: "a probe refused during the suspension",
    });
    expect(await count("select count(*)::int as n from sync.events where outcome = 'failed'")).toBe(0);

    await admin("resume");
    const truth = () => sandbox.truth.orders();
    let problems: string[] = [];
    await waitFor(
      async () => {
        problems = await compareReplicaWithTruth(db.sql, truth());
        return problems.length === 0;
      },
      { timeoutMs: 60_000, intervalMs: 500, what: "the replica to match the sandbox" },
    ).catch((error: Error) => {
      throw new Error(`${error.message}: ${problems.slice(0, 3).join("; ")}`);
    });
    expect(await count("select count(*)::int as n from sync.upstream_pauses")).toBe(0);
    expect(await count("select count(*)::int as n from sync.events where outcome = 'failed'")).toBe(0);
    expect(
      await count("select count(*)::int as n from graphile_worker.jobs where attempts >= max_attempts"),
    ).toBe(0);
    const after = await runCli(["status"], { DATABASE_URL: db.url, ...loopsApiEnv(sandbox) });
    expect(after.stdout).not.toContain("paused since");
  });
});
