// A scope refused for a resource off the hot path (brands) against the sandbox and a real `loops-sync start`:
// the resource is set aside for the merchant (or the application) in sync.resource_refusals, orders keep
// flowing with no pause, a reconcile before retry_at makes no brands call, `loops-sync refresh` retries it at
// once, and once the scope is granted a refresh reads the brands and clears the row.

import { ALL_SCOPES, defaultSeed, type Sandbox, startSandbox } from "@loops-sync/sandbox";
import { reconcileMerchant } from "@loops-sync/worker/reconcile/reconcile-merchant";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loopsApiEnv } from "#testkit/processes";
import { waitFor } from "#testkit/wait-for";
import { createTestDatabase } from "../support/db.ts";
import { type StartedLoopsSync, startLoopsSync } from "../support/loops-sync-start.ts";
import { runCli } from "../support/operator-run.ts";
import { sandboxClient } from "../support/sandbox-orders.ts";

const WITHOUT_BRANDS = ALL_SCOPES.filter((s) => s !== "brands:read");

interface Refusal {
  scope: string;
  merchant_id: string | null;
  resource: string;
  code: string;
  refusals: number;
  future: boolean;
}

async function world(seedScopes: "merchant" | "application") {
  const seed = defaultSeed();
  if (seedScopes === "merchant") seed.merchants[0]!.grantedScopes = [...WITHOUT_BRANDS];
  else seed.applications[0]!.scopes = [...WITHOUT_BRANDS];
  const db = await createTestDatabase();
  const sandbox = await startSandbox({ port: 0, seed });
  const running = await startLoopsSync({
    databaseUrl: db.url,
    sandbox,
    env: { LOOPS_MERCHANT_IDS: sandbox.merchantIds.join(",") },
  });
  const refusals = () => db.sql<Refusal[]>`
    select scope, merchant_id, resource, code, refusals, retry_at > now() + interval '50 minutes' as future
    from sync.resource_refusals order by scope, merchant_id, resource`;
  const count = async (query: string) => (await db.sql.unsafe<{ n: number }[]>(query))[0]!.n;
  const ordersFlow = async (merchantId: string) => {
    const orders = Array.from({ length: 3 }, () => sandbox.createOrder({ merchantId }));
    await waitFor(
      async () =>
        (await db.sql`select id from replica.orders where id in ${db.sql(orders.map((o) => o.id))}`)
          .length === orders.length,
      { timeoutMs: 30_000, what: "the orders made while brands are set aside in the replica" },
    );
  };
  const close = async () => {
    running.child.kill("SIGTERM");
    await sandbox.close();
    await db.drop();
  };
  return { db, sandbox, running, refusals, count, ordersFlow, close };
}

describe("a scope a merchant did not grant, off the hot path", () => {
  let w: Awaited<ReturnType<typeof world>>;
  let sandbox: Sandbox;
  let running: StartedLoopsSync;
  let merchant: string;
  const brandCalls = () => sandbox.stats().apiCalls["GET /brands"] ?? 0;
  const refresh = () =>
    runCli(["refresh", "--merchant", merchant, "--json"], {
      DATABASE_URL: w.db.url,
      ...loopsApiEnv(sandbox),
    });

  beforeAll(async () => {
    w = await world("merchant");
    ({ sandbox, running } = w);
    merchant = sandbox.merchantIds[0]!;
  });
  afterAll(async () => {
    await w?.close();
  });

  it("sets brands aside for that merchant only, orders flow with no pause, and refresh retries and clears it", {
    timeout: 120_000,
  }, async () => {
    // The reconcile at start met 403 scope_not_granted on GET /brands for the first merchant.
    await waitFor(async () => (await w.refusals()).length > 0, {
      timeoutMs: 30_000,
      what: "brands set aside by the reconcile at start",
    });
    expect(await w.refusals()).toEqual([
      {
        scope: "merchant",
        merchant_id: merchant,
        resource: "brands",
        code: "scope_not_granted",
        refusals: 1,
        future: true,
      },
    ]);
    // The reconcile jobs succeeded (none left to retry); the other merchant's brands were read.
    await waitFor(
      async () =>
        (await w.count(
          "select count(*)::int as n from graphile_worker.jobs where task_identifier = 'reconcile_merchant'",
        )) === 0,
      { timeoutMs: 30_000, what: "the reconcile jobs to finish" },
    );
    expect(
      await w.count("select count(*)::int as n from replica.brands where merchant_id = 'mer_demo_2'"),
    ).toBe(1);
    expect(
      await w.count(`select count(*)::int as n from replica.brands where merchant_id = '${merchant}'`),
    ).toBe(0);

    await w.ordersFlow(merchant);
    expect(await w.count("select count(*)::int as n from sync.upstream_pauses")).toBe(0);
    expect(await w.count("select count(*)::int as n from sync.events where outcome = 'failed'")).toBe(0);

    const status = await runCli(["status", "--json"], { DATABASE_URL: w.db.url, ...loopsApiEnv(sandbox) });
    expect(status.code).toBe(1);
    const reported = JSON.parse(status.stdout) as {
      recovery: { pauses: unknown[]; setAside: { resource: string; merchantId: string | null }[] };
      attention: { kind: string; detail: string }[];
    };
    expect(reported.recovery.pauses).toEqual([]);
    expect(reported.recovery.setAside).toMatchObject([
      { scope: "merchant", merchantId: merchant, resource: "brands" },
    ]);
    expect(reported.attention.find((a) => a.kind === "set_aside")?.detail).toMatch(
      /brands of mer_demo_1 set aside since .*scope_not_granted/,
    );
    const text = await runCli(["status"], { DATABASE_URL: w.db.url, ...loopsApiEnv(sandbox) });
    expect(text.stdout).toMatch(/needs attention: brands of mer_demo_1 set aside/);
    const metrics = await (await fetch(`${running.admin}/metrics`)).text();
    expect(metrics).toMatch(/loops_sync_upstream_set_aside\{scope="merchant",resource="brands"\} 1/);
    const api = (await (await fetch(`${running.admin}/status/api`)).json()) as {
      recovery: { setAside: { resource: string }[] };
    };
    expect(api.recovery.setAside).toMatchObject([{ resource: "brands" }]);

    // A reconcile before retry_at makes no brands call, and succeeds.
    sandbox.resetStats();
    const again = await reconcileMerchant(w.db.sql, sandboxClient(sandbox), merchant);
    expect(again.setAside).toEqual(["brands"]);
    expect(brandCalls()).toBe(0);
    expect(sandbox.stats().apiCalls["GET /connection"]).toBe(1);

    // `refresh` ignores retry_at: it calls, is refused again (the wait stays), and still exits 0.
    const retried = await refresh();
    expect(retried.code, retried.stderr).toBe(0);
    expect(brandCalls()).toBe(1);
    expect(JSON.parse(retried.stdout).merchants).toMatchObject([{ status: "ok", setAside: ["brands"] }]);
    expect((await w.refusals())[0]).toMatchObject({ resource: "brands", refusals: 1, future: true });
    // Once retry_at has passed, a refusal doubles the wait (2 h).
    await w.db.sql`update sync.resource_refusals set retry_at = now() - interval '1 second'`;
    await reconcileMerchant(w.db.sql, sandboxClient(sandbox), merchant);
    expect(brandCalls()).toBe(2);
    const [doubled] = await w.db.sql<{ refusals: number; hours: number }[]>`
      select refusals, round(extract(epoch from retry_at - now()) / 3600)::int as hours
      from sync.resource_refusals`;
    expect(doubled).toEqual({ refusals: 2, hours: 2 });

    // The merchant grants the scope; the next refresh reads the brands and clears the set-aside.
    const granted = await fetch(
      `${sandbox.url}/admin/applications/${sandbox.credentials.applicationId}/scopes`,
      {
        method: "PUT",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ merchant_id: merchant, scopes: ALL_SCOPES }),
      },
    );
    expect(granted.status).toBe(200);
    const cleared = await refresh();
    expect(cleared.code, cleared.stderr).toBe(0);
    expect(JSON.parse(cleared.stdout).merchants).toMatchObject([{ status: "ok", setAside: [] }]);
    expect(await w.refusals()).toEqual([]);
    expect(
      await w.count(`select count(*)::int as n from replica.brands where merchant_id = '${merchant}'`),
    ).toBe(1);
    // Logged once, when it was first set aside.
    expect(running.output().split("Loops refused the scope of an extra resource").length - 1).toBe(1);
  });
});

describe("a scope the application is not approved for, off the hot path", () => {
  let w: Awaited<ReturnType<typeof world>>;
  beforeAll(async () => {
    w = await world("application");
  });
  afterAll(async () => {
    await w?.close();
  });

  it("sets brands aside for the application, and orders of every merchant flow with no pause", {
    timeout: 120_000,
  }, async () => {
    await waitFor(async () => (await w.refusals()).length > 0, {
      timeoutMs: 30_000,
      what: "brands set aside by the reconcile at start",
    });
    expect(await w.refusals()).toEqual([
      {
        scope: "application",
        merchant_id: null,
        resource: "brands",
        code: "insufficient_scope",
        refusals: 1,
        future: true,
      },
    ]);
    for (const merchant of w.sandbox.merchantIds) await w.ordersFlow(merchant);
    expect(await w.count("select count(*)::int as n from sync.upstream_pauses")).toBe(0);
    // The application's set-aside covers every merchant: a reconcile of the other one calls no brands.
    w.sandbox.resetStats();
    const other = await reconcileMerchant(w.db.sql, sandboxClient(w.sandbox), w.sandbox.merchantIds[1]!);
    expect(other.setAside).toEqual(["brands"]);
    expect(w.sandbox.stats().apiCalls["GET /brands"] ?? 0).toBe(0);
  });
});
