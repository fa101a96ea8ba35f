// A pause's probe calls the route Loops refused, not GET /orders: a merchant that withheld events:read is
// refused on GET /events while its orders still answer, so a probe of GET /orders would lift the pause only
// for catch-up to meet the refusal again.

import { enterPause, listPauses } from "@loops-sync/replica";
import { ALL_SCOPES, defaultSeed, type Sandbox, startSandbox } from "@loops-sync/sandbox";
import { type RunningWorker, startWorker } from "@loops-sync/worker";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { waitFor } from "#testkit/wait-for";
import { createTestDatabase, type TestDatabase } from "../support/db.ts";
import { sandboxClient } from "../support/sandbox-client.ts";

describe("the probe of a merchant's pause", () => {
  let db: TestDatabase;
  let sandbox: Sandbox;
  let worker: RunningWorker;
  const merchant = "mer_demo_1";

  beforeAll(async () => {
    const seed = defaultSeed();
    seed.merchants[0]!.grantedScopes = ALL_SCOPES.filter((s) => s !== "events:read");
    db = await createTestDatabase();
    sandbox = await startSandbox({ port: 0, seed });
    worker = await startWorker({
      databaseUrl: db.url,
      sql: db.sql,
      client: sandboxClient(sandbox),
      merchantIds: [],
      refreshResourcesAtStart: false,
      resourcesCron: "0 0 1 1 *",
      pauseBackoff: { firstSeconds: 1, maxSeconds: 2 },
    });
  });
  afterAll(async () => {
    await worker?.stop();
    await sandbox?.close();
    await db?.drop();
  });

  it("calls the refused GET /events and stays paused; a pause of GET /orders is lifted by its answer", {
    timeout: 120_000,
  }, async () => {
    const refused = {
      kind: "paused",
      scope: "merchant",
      cause: "scope_not_granted",
      message: "the merchant did not grant events:read",
    } as const;
    await enterPause(db.sql, { ...refused, route: "/events" }, merchant, { firstSeconds: 1, maxSeconds: 2 });
    await waitFor(async () => ((await listPauses(db.sql))[0]?.probes ?? 0) >= 2, {
      timeoutMs: 60_000,
      what: "two probes of the events pause refused",
    });
    expect(sandbox.stats().apiCalls["GET /events"]).toBeGreaterThanOrEqual(2);
    expect(sandbox.stats().apiCalls["GET /orders"] ?? 0).toBe(0);

    // The same refusal on a route the merchant did grant (a scope granted since): the answer lifts it.
    await db.sql`delete from sync.upstream_pauses`;
    await enterPause(db.sql, { ...refused, route: "/orders" }, merchant, { firstSeconds: 1, maxSeconds: 2 });
    await waitFor(async () => (await listPauses(db.sql)).length === 0, {
      timeoutMs: 60_000,
      what: "the orders pause lifted by its probe",
    });
    expect(sandbox.stats().apiCalls["GET /orders"]).toBeGreaterThanOrEqual(1);
  });
});
