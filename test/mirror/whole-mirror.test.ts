// The whole mirror against the sandbox, all real: `loops-sync start` as a child process (receiver + worker,
// webhooks from the sandbox over HTTP), `loops-sync refresh` as another, and the mirror read from Postgres.

import { LoopsClient } from "@loops-sync/loops-client";
import { DEFAULT_SANDBOX_CREDENTIALS, type Sandbox, startSandbox } from "@loops-sync/sandbox";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loopsApiEnv } from "#testkit/processes";
import { waitFor } from "#testkit/wait-for";
import { runCli } from "../cli/operator-run.ts";
import { createTestDatabase, type TestDatabase } from "../support/db.ts";
import { type StartedLoopsSync, startLoopsSync } from "../support/loops-sync-start.ts";
import { importedMenu } from "./menu-fixtures.ts";

const MERCHANT = "mer_demo_1";
const BRAND = "brd_demo_1";

describe("the whole mirror", () => {
  let db: TestDatabase;
  let sandbox: Sandbox;
  let started: StartedLoopsSync;
  let client: LoopsClient;

  const menuVersion = async (brandId = BRAND) =>
    (await db.sql<{ version: number }[]>`select version from replica.menus where brand_id = ${brandId}`)[0]
      ?.version;
  const productRefs = async () =>
    (
      await db.sql<{ external_ref: string }[]>`
        select external_ref from replica.menu_products where brand_id = ${BRAND} order by external_ref`
    ).map((r) => r.external_ref);
  const refresh = (...args: string[]) =>
    runCli(["refresh", ...args], { DATABASE_URL: db.url, ...loopsApiEnv(sandbox) }, 60_000);
  const admin = (path: string, method: string, body: unknown) =>
    fetch(`${sandbox.url}/admin${path}`, {
      method,
      headers: { "content-type": "application/json" },
      body: JSON.stringify(body),
    }).then(async (r) => ({ status: r.status, body: (await r.json()) as { id: string } }));

  beforeAll(async () => {
    db = await createTestDatabase();
    sandbox = await startSandbox({ port: 0, jobStepMs: 20 });
    client = new LoopsClient({
      apiUrl: sandbox.apiUrl,
      authUrl: sandbox.authUrl,
      clientId: DEFAULT_SANDBOX_CREDENTIALS.clientId,
      clientSecret: DEFAULT_SANDBOX_CREDENTIALS.clientSecret,
    });
    started = await startLoopsSync({
      databaseUrl: db.url,
      sandbox,
      // A year away: only the reconcile at start and `refresh` run in this file.
      env: { LOOPS_MERCHANT_IDS: "mer_demo_1,mer_demo_2", RECONCILE_CRON: "0 0 1 1 *", LOG_LEVEL: "warn" },
    });
  });

  afterAll(async () => {
    started?.child.kill("SIGTERM");
    if (started && started.child.exitCode === null) await new Promise((r) => started.child.once("exit", r));
    await sandbox?.close();
    await db?.drop();
  });

  it("mirrors brands and menus as rows at start", async () => {
    await waitFor(
      async () => (await productRefs()).length === 10 && (await menuVersion("brd_demo_2")) === 1,
      {
        what: "both seeded menus as rows",
      },
    );
    const brands = await db.sql`select id, merchant_id, name_en, name_ar from replica.brands order by id`;
    expect(brands).toEqual([
      { id: "brd_demo_1", merchant_id: "mer_demo_1", name_en: "Najd Grill", name_ar: "مشويات نجد" },
      { id: "brd_demo_2", merchant_id: "mer_demo_2", name_en: "Hijaz Coffee", name_ar: "قهوة الحجاز" },
    ]);
    const [shawarma] = await db.sql`
      select brand_id, category_external_ref, name_en, name_ar, price_amount, currency, sku, available, sort_order,
             menu_version
      from replica.menu_products where brand_id = ${BRAND} and external_ref = 'shw-chk'`;
    expect(shawarma).toEqual({
      brand_id: BRAND,
      category_external_ref: "mains",
      name_en: "Chicken Shawarma",
      name_ar: "شاورما دجاج",
      price_amount: 1500,
      currency: "SAR",
      sku: "SHW-CHK",
      available: true,
      sort_order: 0,
      menu_version: 1,
    });
    const options = await db.sql`
      select external_ref, price_amount from replica.menu_modifier_options
      where brand_id = ${BRAND} and group_external_ref = 'shw-chk-extras' order by sort_order`;
    expect(options).toEqual([
      { external_ref: "shw-chk-extra-1", price_amount: 200 },
      { external_ref: "shw-chk-extra-2", price_amount: 300 },
    ]);
    const [link] = await db.sql`
      select group_external_ref, sort_order from replica.menu_product_modifier_groups
      where brand_id = ${BRAND} and product_external_ref = 'shw-chk'`;
    expect(link).toEqual({ group_external_ref: "shw-chk-extras", sort_order: 0 });
    const neverSold = await db.sql`
      select product_external_ref from reporting.menu_products_never_sold where brand_id = ${BRAND}`;
    expect(neverSold.map((r) => r.product_external_ref)).toContain("maamoul");
  });

  it("lands a portal import as a job plus the new menu rows, the replaced products gone", async () => {
    const job = await admin(`/brands/${BRAND}/menu`, "POST", importedMenu("p"));
    expect(job.status).toBe(202);
    await waitFor(async () => (await menuVersion()) === 2, { what: "menu version 2 mirrored" });
    expect(await productRefs()).toEqual(["kebab-p", "laban-p"]);
    const [stored] = await db.sql`select type, status, brand_id from replica.jobs where id = ${job.body.id}`;
    expect(stored).toEqual({ type: "menu_import", status: "succeeded", brand_id: BRAND });
    const variants = await db.sql`
      select external_ref, price_amount, available, sort_order from replica.menu_product_variants
      where brand_id = ${BRAND} order by sort_order`;
    expect(variants).toEqual([
      { external_ref: "laban-s-p", price_amount: 400, available: true, sort_order: 0 },
      { external_ref: "laban-l-p", price_amount: 700, available: false, sort_order: 1 },
    ]);
    const [event] = await db.sql`
      select outcome from sync.events where type = 'job.completed' and payload #>> '{data,job_id}' = ${job.body.id}`;
    expect(event?.outcome).toBe("applied");
  });

  it("ignores our own import until refresh, then mirrors it", async () => {
    const job = await client.forMerchant(MERCHANT).menus.import(BRAND, importedMenu("own"));
    await waitFor(
      async () =>
        (
          await db.sql`
            select 1 from sync.events
            where type = 'job.completed' and payload #>> '{data,job_id}' = ${job.id} and outcome = 'ignored_self'`
        ).length === 1,
      { what: "our job.completed stored as ignored_self" },
    );
    expect(await menuVersion()).toBe(2);

    const run = await refresh("--merchant", MERCHANT, "--json");
    expect(run.code, run.stderr).toBe(0);
    const result = JSON.parse(run.stdout) as {
      merchants: { merchantId: string; changed: { menu: number } }[];
    };
    expect(result.merchants).toEqual([
      expect.objectContaining({ merchantId: MERCHANT, changed: expect.objectContaining({ menu: 1 }) }),
    ]);
    expect(await menuVersion()).toBe(3);
    expect(await productRefs()).toEqual(["kebab-own", "laban-own"]);
    // Our job too: its job.completed was ignored, so the reconcile reads it (once).
    const [ours] = await db.sql`select status from replica.jobs where id = ${job.id}`;
    expect(ours).toEqual({ status: "succeeded" });
  });

  it("renames a brand renamed without any event on refresh, and a second refresh changes nothing", async () => {
    const renamed = await admin(`/brands/${BRAND}`, "PATCH", {
      name: { en: "Najd Grill House", ar: "بيت مشويات نجد" },
    });
    expect(renamed.status).toBe(200);
    const first = await refresh("--json");
    expect(first.code, first.stderr).toBe(0);
    const [brand] = await db.sql`select name_en, name_ar from replica.brands where id = ${BRAND}`;
    expect(brand).toEqual({ name_en: "Najd Grill House", name_ar: "بيت مشويات نجد" });

    const second = await refresh("--json");
    expect(second.code, second.stderr).toBe(0);
    const again = JSON.parse(second.stdout) as {
      merchants: { changed: Record<string, number>; apiCalls: number }[];
      apiCalls: number;
    };
    // As docs/operations.md counts: 2 + 1 + 2 (locations) + 1 + 1 (brands) per merchant, + GET /channels.
    expect(again.merchants.map((m) => m.apiCalls)).toEqual([7, 7]);
    expect(again.apiCalls).toBe(15);
    const nothing = {
      merchant: 0,
      connection: 0,
      location: 0,
      channel_connection: 0,
      brand: 0,
      menu: 0,
      job: 0,
    };
    expect(again.merchants.map((m) => m.changed)).toEqual([nothing, nothing]);
    // The first refresh recorded the rename in the change feed, the second nothing.
    const feed = await db.sql`
      select resource, operation, source from replica.changes where resource = 'brand' and resource_id = ${BRAND}
      order by position desc limit 1`;
    expect(feed).toEqual([{ resource: "brand", operation: "update", source: "reconcile" }]);
  });

  it("mirrors our own publish on refresh, with each location's result: which one rejected the menu, and why", async () => {
    const job = await client.forMerchant("mer_demo_2").menus.publish("brd_demo_2");
    await waitFor(
      async () =>
        (
          await db.sql`
            select 1 from sync.events
            where type = 'job.completed' and payload #>> '{data,job_id}' = ${job.id} and outcome = 'ignored_self'`
        ).length === 1,
      { what: "our publish's job.completed stored as ignored_self" },
    );
    const run = await refresh("--merchant", "mer_demo_2", "--json");
    expect(run.code, run.stderr).toBe(0);
    const rejected = await db.sql`
      select location_id, channel, error_code from reporting.menu_publish_results
      where job_id = ${job.id} and status = 'failed' order by location_id`;
    // Careem takes no menus through the API (the sandbox's catalog says so).
    expect(rejected).toEqual([
      { location_id: "loc_demo_2a", channel: "careem", error_code: "menu_not_supported" },
      { location_id: "loc_demo_2b", channel: "careem", error_code: "menu_not_supported" },
    ]);
    const [stored] = await db.sql`select status from replica.jobs where id = ${job.id}`;
    expect(stored).toEqual({ status: "partially_failed" });
  });

  it("mirrors a location that goes live at approval, with its channel connections, within seconds", async () => {
    const location = await client.forMerchant(MERCHANT).locations.create({
      external_ref: "nakheel",
      brand_id: BRAND,
      name: { en: "Nakheel", ar: "النخيل" },
      phone: "+966112223344",
      address: { line1: "King Fahd Rd", city: "Riyadh", latitude: 24.77, longitude: 46.64 },
      opening_hours: Object.fromEntries(
        ["sunday", "monday", "tuesday", "wednesday", "thursday", "friday", "saturday"].map((d) => [
          d,
          [{ opens: "10:00", closes: "23:00" }],
        ]),
      ) as never,
    });
    const review = await admin(`/merchants/${MERCHANT}/business-profile/review`, "POST", {
      decision: "approved",
    });
    expect(review.status).toBe(200);
    const connections = await waitFor(
      async () => {
        const rows = await db.sql<{ channel: string; status: string }[]>`
          select c.channel, c.status from replica.channel_connections c
          join replica.locations l on l.id = c.location_id
          where l.id = ${location.id} and l.status = 'open' order by c.channel`;
        return rows.length > 0 && rows;
      },
      { timeoutMs: 10_000, what: "the new location and its channel connections" },
    );
    expect(connections).toEqual([
      { channel: "hungerstation", status: "active" },
      { channel: "jahez", status: "active" },
    ]);
  });

  it("has refresh answer --help and a bad flag as the README says", async () => {
    const help = await runCli(["refresh", "--help"]);
    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(/--merchant <id>/);
    expect(help.stdout).toMatch(/Exit codes:/);
    const bad = await runCli(["refresh", "--merchant", "shop-1"]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/--merchant.*mer_abc123/);
  });
});
