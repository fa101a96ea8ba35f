// The whole mirror against the sandbox, all real: `loops-sync start` as a child process (receiver + worker,
// webhooks from the sandbox over HTTP), `loops-sync refresh` as another, and the mirror read from Postgres.

import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { waitFor } from "#testkit/wait-for";
import { importedMenu } from "../support/menu-fixtures.ts";
import { type MirrorWorld, startMirrorWorld } from "../support/mirror-world.ts";

const MERCHANT = "mer_demo_1";
const BRAND = "brd_demo_1";

describe("the whole mirror", () => {
  let w: MirrorWorld;
  beforeAll(async () => {
    w = await startMirrorWorld();
  });
  afterAll(async () => {
    await w?.close();
  });
  const menuVersion = (brandId = BRAND) => w.menuVersion(brandId);
  const productRefs = () => w.productRefs(BRAND);
  const refresh = (...args: string[]) => w.refresh(...args);
  const admin = (path: string, method: string, body: unknown) => w.admin(path, method, body);

  it("mirrors brands and menus as rows at start", async () => {
    await waitFor(
      async () => (await productRefs()).length === 10 && (await menuVersion("brd_demo_2")) === 1,
      {
        what: "both seeded menus as rows",
      },
    );
    const brands = await w.db.sql`select id, merchant_id, name_en, name_ar from replica.brands order by id`;
    expect(brands).toEqual([
      { id: "brd_demo_1", merchant_id: "mer_demo_1", name_en: "Najd Grill", name_ar: "مشويات نجد" },
      { id: "brd_demo_2", merchant_id: "mer_demo_2", name_en: "Hijaz Coffee", name_ar: "قهوة الحجاز" },
    ]);
    const [shawarma] = await w.db.sql`
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
    const options = await w.db.sql`
      select external_ref, price_amount from replica.menu_modifier_options
      where brand_id = ${BRAND} and group_external_ref = 'shw-chk-extras' order by sort_order`;
    expect(options).toEqual([
      { external_ref: "shw-chk-extra-1", price_amount: 200 },
      { external_ref: "shw-chk-extra-2", price_amount: 300 },
    ]);
    const [link] = await w.db.sql`
      select group_external_ref, sort_order from replica.menu_product_modifier_groups
      where brand_id = ${BRAND} and product_external_ref = 'shw-chk'`;
    expect(link).toEqual({ group_external_ref: "shw-chk-extras", sort_order: 0 });
    const neverSold = await w.db.sql`
      select product_external_ref from reporting.menu_products_never_sold where brand_id = ${BRAND}`;
    expect(neverSold.map((r) => r.product_external_ref)).toContain("maamoul");
  });

  it("lands a portal import as a job plus the new menu rows, the replaced products gone", async () => {
    const job = await admin(`/brands/${BRAND}/menu`, "POST", importedMenu("p"));
    expect(job.status).toBe(202);
    await waitFor(async () => (await menuVersion()) === 2, { what: "menu version 2 mirrored" });
    expect(await productRefs()).toEqual(["kebab-p", "laban-p"]);
    const [stored] = await w.db
      .sql`select type, status, brand_id from replica.jobs where id = ${job.body.id}`;
    expect(stored).toEqual({ type: "menu_import", status: "succeeded", brand_id: BRAND });
    const variants = await w.db.sql`
      select external_ref, price_amount, available, sort_order from replica.menu_product_variants
      where brand_id = ${BRAND} order by sort_order`;
    expect(variants).toEqual([
      { external_ref: "laban-s-p", price_amount: 400, available: true, sort_order: 0 },
      { external_ref: "laban-l-p", price_amount: 700, available: false, sort_order: 1 },
    ]);
    const [event] = await w.db.sql`
      select outcome from sync.events where type = 'job.completed' and payload #>> '{data,job_id}' = ${job.body.id}`;
    expect(event?.outcome).toBe("applied");
  });

  it("ignores our own import until refresh, then mirrors it", async () => {
    const job = await w.client.forMerchant(MERCHANT).menus.import(BRAND, importedMenu("own"));
    await waitFor(
      async () =>
        (
          await w.db.sql`
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
    const [ours] = await w.db.sql`select status from replica.jobs where id = ${job.id}`;
    expect(ours).toEqual({ status: "succeeded" });
  });

  it("mirrors a location that goes live at approval, with its channel connections, within seconds", async () => {
    const location = await w.client.forMerchant(MERCHANT).locations.create({
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
        const rows = await w.db.sql<{ channel: string; status: string }[]>`
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
});
