// The whole mirror's writers on a real Postgres: each gate (menu version, brand updated_at, job lifecycle),
// an equal read writing nothing, menu rows replaced with their version, and the reporting views over them.

import { applyBrands, applyJob, applyMenuIfNewer } from "@loops-sync/replica";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "../support/db.ts";
import { importedMenu } from "../support/menu-fixtures.ts";

const MERCHANT = "mer_w";
const menu = (brandId: string, version: number, suffix: string) => ({
  brand_id: brandId,
  version,
  updated_at: `2026-11-0${version}T10:00:00Z`,
  ...importedMenu(suffix),
});

describe("whole-mirror writers", () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase();
  });
  afterAll(async () => {
    await db?.drop();
  });

  const rows = async (brandId: string) =>
    db.sql<{ external_ref: string; menu_version: number }[]>`
      select external_ref, menu_version from replica.menu_products where brand_id = ${brandId}
      order by external_ref`;

  it("replaces a brand's menu rows only with a newer version, and reports each change", async () => {
    const first = await applyMenuIfNewer(db.sql, MERCHANT, menu("brd_a", 2, "a"));
    expect(first).toEqual({
      resource: "menu",
      resourceId: "brd_a",
      merchantId: MERCHANT,
      operation: "insert",
      version: 2,
      previousVersion: null,
    });
    expect(await applyMenuIfNewer(db.sql, MERCHANT, menu("brd_a", 1, "old"))).toBeUndefined();
    expect(await applyMenuIfNewer(db.sql, MERCHANT, menu("brd_a", 2, "a"))).toBeUndefined();
    expect(await rows("brd_a")).toEqual([
      { external_ref: "kebab-a", menu_version: 2 },
      { external_ref: "laban-a", menu_version: 2 },
    ]);
    const third = await applyMenuIfNewer(db.sql, MERCHANT, menu("brd_a", 3, "b"));
    expect(third).toMatchObject({ operation: "update", version: 3, previousVersion: 2 });
    expect(await rows("brd_a")).toEqual([
      { external_ref: "kebab-b", menu_version: 3 },
      { external_ref: "laban-b", menu_version: 3 },
    ]);
    const [counts] = await db.sql`
      select (select count(*)::int from replica.menu_categories where brand_id = 'brd_a') as categories,
             (select count(*)::int from replica.menu_product_variants where brand_id = 'brd_a') as variants,
             (select count(*)::int from replica.menu_modifier_groups where brand_id = 'brd_a') as groups,
             (select count(*)::int from replica.menu_modifier_options where brand_id = 'brd_a') as options,
             (select count(*)::int from replica.menu_product_modifier_groups where brand_id = 'brd_a') as links`;
    expect(counts).toEqual({ categories: 2, variants: 2, groups: 1, options: 2, links: 1 });
  });

  it("keeps the newest of two menus written at once", async () => {
    await Promise.all([
      applyMenuIfNewer(db.sql, MERCHANT, menu("brd_c", 5, "new")),
      applyMenuIfNewer(db.sql, MERCHANT, menu("brd_c", 4, "old")),
    ]);
    expect(await rows("brd_c")).toEqual([
      { external_ref: "kebab-new", menu_version: 5 },
      { external_ref: "laban-new", menu_version: 5 },
    ]);
  });

  it("gates brands on updated_at and writes nothing for an equal read", async () => {
    const brand = (name: string, updatedAt: string) => ({
      id: "brd_b",
      merchant_id: MERCHANT,
      name: { en: name, ar: "ع" },
      description: { en: "Grill", ar: null },
      updated_at: updatedAt,
    });
    expect(await applyBrands(db.sql, MERCHANT, [brand("One", "2026-11-02T00:00:00Z")])).toEqual([
      { resource: "brand", resourceId: "brd_b", merchantId: MERCHANT, operation: "insert" },
    ]);
    expect(await applyBrands(db.sql, MERCHANT, [brand("One", "2026-11-02T00:00:00Z")])).toEqual([]);
    expect(await applyBrands(db.sql, MERCHANT, [brand("Older", "2026-11-01T00:00:00Z")])).toEqual([]);
    expect(await applyBrands(db.sql, MERCHANT, [brand("Two", "2026-11-03T00:00:00Z")])).toMatchObject([
      { operation: "update" },
    ]);
    const [stored] = await db.sql`select name_en, description_en from replica.brands where id = 'brd_b'`;
    expect(stored).toEqual({ name_en: "Two", description_en: "Grill" });
  });

  it("stores a publish job's results as rows and never puts a finished job back in progress", async () => {
    const job = (status: string, results: unknown[] = []) => ({
      id: "job_p",
      type: "menu_publish",
      brand_id: "brd_a",
      status,
      results,
      created_at: "2026-11-05T10:00:00Z",
      completed_at: status === "running" ? null : "2026-11-05T10:01:00Z",
    });
    expect(await applyJob(db.sql, MERCHANT, job("running"))).toMatchObject({
      operation: "insert",
      status: "running",
      previousStatus: null,
    });
    const results = [
      {
        location_id: "loc_1",
        channel_connection_id: "chc_1",
        channel: "jahez",
        status: "succeeded",
        errors: [],
      },
      {
        location_id: "loc_2",
        channel_connection_id: "chc_2",
        channel: "careem",
        status: "failed",
        errors: [{ external_ref: "kebab-a", field: null, code: "menu_not_supported", message: "no menus" }],
      },
    ];
    expect(await applyJob(db.sql, MERCHANT, job("partially_failed", results))).toMatchObject({
      operation: "update",
      status: "partially_failed",
      previousStatus: "running",
    });
    expect(await applyJob(db.sql, MERCHANT, job("partially_failed", results))).toBeUndefined();
    expect(await applyJob(db.sql, MERCHANT, job("running"))).toBeUndefined();
    const rejected = await db.sql`
      select location_id, channel, error_code, error_external_ref from reporting.menu_publish_results
      where job_id = 'job_p' and status = 'failed'`;
    expect(rejected).toEqual([
      {
        location_id: "loc_2",
        channel: "careem",
        error_code: "menu_not_supported",
        error_external_ref: "kebab-a",
      },
    ]);
  });

  it("counts sales per menu product by sku or name, and lists the products never sold", async () => {
    await db.sql`
      insert into replica.locations (id, merchant_id, brand_id, status, raw)
      values ('loc_s', ${MERCHANT}, 'brd_a', 'open', '{}')`;
    const order = async (id: string, type: string, status: string) =>
      db.sql`
        insert into replica.orders (id, merchant_id, location_id, channel, type, status, version, currency,
                                    created_at, updated_at, raw)
        values (${id}, ${MERCHANT}, 'loc_s', 'jahez', ${type}, ${status}, 1, 'SAR', now(), now(), '{}')`;
    await order("ord_1", "pickup", "picked_up");
    await order("ord_2", "delivery", "picked_up");
    await db.sql`
      insert into replica.order_items (order_id, position, name_en, sku, quantity, unit_price_amount, currency)
      values ('ord_1', 0, 'Kebab b', 'KBB-b', 2, 3500, 'SAR'), ('ord_1', 1, 'Laban', null, 1, 400, 'SAR'),
             ('ord_2', 0, 'Something else', 'LBN-S-b', 1, 400, 'SAR')`;
    const finals = await db.sql`select order_id, is_final from reporting.orders order by order_id`;
    expect(finals).toEqual([
      { order_id: "ord_1", is_final: true },
      { order_id: "ord_2", is_final: false },
    ]);
    const sales = await db.sql`
      select product_external_ref, quantity_sold, revenue_amount, orders_count from reporting.menu_product_sales
      where brand_id = 'brd_a' order by product_external_ref`;
    expect(sales).toEqual([
      { product_external_ref: "kebab-b", quantity_sold: 2, revenue_amount: 7000, orders_count: 1 },
      { product_external_ref: "laban-b", quantity_sold: 2, revenue_amount: 800, orders_count: 2 },
    ]);
    await applyMenuIfNewer(db.sql, MERCHANT, {
      ...menu("brd_a", 9, "b"),
      products: [
        ...importedMenu("b").products,
        { ...importedMenu("z").products[0]!, category_external_ref: "grill-b" },
      ],
    });
    const never =
      await db.sql`select product_external_ref from reporting.menu_products_never_sold where brand_id = 'brd_a'`;
    expect(never).toEqual([{ product_external_ref: "kebab-z" }]);
  });
});
