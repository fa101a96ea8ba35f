// A merchant that withheld locations:read loses only its locations (DESIGN.md "Merchants come and go"): against
// the sandbox and a real `loops-sync start`, GET /locations answers 403 scope_not_granted, locations are set
// aside for that merchant (sync.resource_refusals, shown by `status`), nothing pauses, and its orders, each
// naming a location the mirror cannot read, are mirrored as promptly as anyone's, with no call for locations
// until the set-aside's retry time.

import { ALL_SCOPES, defaultSeed, type Sandbox, startSandbox } from "@loops-sync/sandbox";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loopsApiEnv } from "#testkit/processes";
import { waitFor } from "#testkit/wait-for";
import { createTestDatabase, type TestDatabase } from "../support/db.ts";
import { type StartedLoopsSync, startLoopsSync } from "../support/loops-sync-start.ts";
import { runCli } from "../support/operator-run.ts";

describe("a merchant without locations:read", () => {
  let db: TestDatabase;
  let sandbox: Sandbox;
  let running: StartedLoopsSync;
  let merchant: string;
  const locationCalls = () =>
    (sandbox.stats().apiCalls["GET /locations"] ?? 0) +
    (sandbox.stats().apiCalls["GET /locations/{location_id}/channel-connections"] ?? 0);
  const count = async (query: string) => (await db.sql.unsafe<{ n: number }[]>(query))[0]!.n;

  beforeAll(async () => {
    const seed = defaultSeed();
    seed.merchants[0]!.grantedScopes = ALL_SCOPES.filter((s) => s !== "locations:read");
    db = await createTestDatabase();
    sandbox = await startSandbox({ port: 0, seed });
    merchant = sandbox.merchantIds[0]!;
    running = await startLoopsSync({
      databaseUrl: db.url,
      sandbox,
      env: { LOOPS_MERCHANT_IDS: sandbox.merchantIds.join(",") },
    });
  });
  afterAll(async () => {
    running?.child.kill("SIGTERM");
    await sandbox?.close();
    await db?.drop();
  });

  it("sets locations aside for it alone; its orders are mirrored, nothing pauses, no location call repeats", {
    timeout: 120_000,
  }, async () => {
    await waitFor(async () => (await count("select count(*)::int as n from sync.resource_refusals")) > 0, {
      timeoutMs: 30_000,
      what: "locations set aside by the reconcile at start",
    });
    const refusals = await db.sql`
      select scope, merchant_id, resource, code from sync.resource_refusals order by resource`;
    expect(refusals).toEqual([
      { scope: "merchant", merchant_id: merchant, resource: "locations", code: "scope_not_granted" },
    ]);
    expect(
      await count(`select count(*)::int as n from replica.locations where merchant_id = '${merchant}'`),
    ).toBe(0);
    // The other merchant's locations are read.
    await waitFor(
      async () =>
        (await count("select count(*)::int as n from replica.locations where merchant_id = 'mer_demo_2'")) >
        0,
      { timeoutMs: 30_000, what: "mer_demo_2's locations mirrored" },
    );

    sandbox.resetStats();
    const orders = Array.from({ length: 6 }, () => sandbox.createOrder({ merchantId: merchant }));
    await waitFor(
      async () =>
        (await db.sql`select id from replica.orders where id in ${db.sql(orders.map((o) => o.id))}`)
          .length === orders.length,
      { timeoutMs: 30_000, what: "the orders of the merchant without locations:read in the replica" },
    );
    expect(await count("select count(*)::int as n from sync.upstream_pauses")).toBe(0);
    // Each order names a location the mirror lacks; the refresh it asks for makes no call while set aside.
    await waitFor(
      async () =>
        (await count(
          "select count(*)::int as n from graphile_worker.jobs where task_identifier = 'refresh_locations'",
        )) === 0,
      { timeoutMs: 30_000, what: "the refresh_locations jobs to finish" },
    );
    expect(locationCalls()).toBe(0);

    const status = await runCli(
      ["status", "--json"],
      { DATABASE_URL: db.url, ...loopsApiEnv(sandbox) },
      100_000,
    );
    expect(status.code).toBe(1);
    const reported = JSON.parse(status.stdout) as {
      recovery: { pauses: unknown[]; setAside: { resource: string; merchantId: string | null }[] };
    };
    expect(reported.recovery.pauses).toEqual([]);
    expect(reported.recovery.setAside).toMatchObject([{ merchantId: merchant, resource: "locations" }]);
  });
});
