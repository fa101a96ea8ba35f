import { type Database, kyselyOver } from "@loops-sync/schema";
import { type Kysely, sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildOrders, LOCATIONS } from "../support/build-orders.ts";
import { createTestDatabase, type TestDatabase } from "../support/db.ts";
import {
  expectedDailySales,
  expectedOutcomes,
  expectedStagePercentiles,
  expectedTopItems,
  expectedTopModifiers,
  localDate,
} from "../support/expected-reports.ts";
import { insertLocations, insertOrders } from "../support/seed-orders.ts";

const orders = buildOrders();
const byKey = <T extends Record<string, unknown>>(rows: readonly T[], keys: readonly string[]) =>
  [...rows].sort((a, b) =>
    keys
      .map((k) => String(a[k]))
      .join("|")
      .localeCompare(keys.map((k) => String(b[k])).join("|")),
  );

/** daily_sales' sums are never null on a row that exists. */
type Sums = { total_amount: number; sales_orders_count: number };

/** A date column as its ISO text (YYYY-MM-DD), as the expectations compute it. */
const asText = (column: string) => sql<string>`${sql.ref(column)}::text`;

describe("reporting views", () => {
  let db: TestDatabase;
  let k: Kysely<Database>;
  beforeAll(async () => {
    db = await createTestDatabase();
    k = kyselyOver<Database>(db.sql);
    await insertLocations(db.sql, LOCATIONS);
    await insertOrders(db.sql, orders);
  });
  afterAll(async () => {
    await db.drop();
  });

  /** reporting.daily_sales' row of loc_olaya, jahez, 2026-11-21. */
  const olayaJahez21 = () =>
    k
      .selectFrom("reporting.daily_sales")
      .where("location_id", "=", "loc_olaya")
      .where("channel", "=", "jahez")
      .where("local_date", "=", sql<Date>`'2026-11-21'`);

  it("puts an order on its location's local calendar day", async () => {
    const rows = await k
      .selectFrom("reporting.orders")
      .select(["order_id", asText("local_date").as("local_date"), "timezone"])
      .where("order_id", "in", [
        "ord_midnight",
        "ord_late_riyadh",
        "ord_late_dubai",
        "ord_unknown_loc",
        "ord_odd_zone",
      ])
      .orderBy("order_id")
      .execute();
    expect(rows).toEqual([
      { order_id: "ord_late_dubai", local_date: "2026-11-21", timezone: "Asia/Dubai" },
      { order_id: "ord_late_riyadh", local_date: "2026-11-20", timezone: "Asia/Riyadh" },
      { order_id: "ord_midnight", local_date: "2026-11-21", timezone: "Asia/Riyadh" },
      { order_id: "ord_odd_zone", local_date: "2026-11-22", timezone: "Asia/Riyadh" },
      { order_id: "ord_unknown_loc", local_date: "2026-11-22", timezone: "Asia/Riyadh" },
    ]);
    // The independent computation agrees on the edge case it is built from.
    expect(localDate("2026-11-20T21:30:00Z", "Asia/Riyadh")).toBe("2026-11-21");
  });

  it("daily_sales equals the totals computed from the orders", async () => {
    const rows = await k
      .selectFrom("reporting.daily_sales")
      .select([
        "merchant_id",
        "location_id",
        "channel",
        asText("local_date").as("local_date"),
        "currency",
        "orders_count",
        "sales_orders_count",
        "rejected_orders_count",
        "cancelled_orders_count",
        "subtotal_amount",
        "discount_amount",
        "delivery_fee_amount",
        "tax_amount",
        "total_amount",
      ])
      .execute();
    const keys = ["merchant_id", "location_id", "channel", "local_date", "currency"];
    expect(byKey(rows, keys)).toEqual(byKey(expectedDailySales(orders, LOCATIONS), keys));
    // The cancelled order counts as an order of its day but adds no money.
    const day = await olayaJahez21()
      .select(["orders_count", "cancelled_orders_count", "total_amount"])
      .executeTakeFirst();
    const cancelled = orders.find((o) => o.id === "ord_cancelled")!;
    const sameDay = orders.filter(
      (o) =>
        o.locationId === "loc_olaya" &&
        o.channel === "jahez" &&
        localDate(o.createdAt, "Asia/Riyadh") === "2026-11-21",
    );
    expect(day!.cancelled_orders_count).toBeGreaterThanOrEqual(1);
    expect(day!.orders_count).toBe(sameDay.length);
    expect(day!.total_amount).toBe(
      sameDay
        .filter((o) => o.status !== "cancelled" && o.status !== "rejected")
        .reduce((s, o) => s + o.total, 0),
    );
    expect(sameDay.map((o) => o.id)).toContain("ord_midnight");
    expect(cancelled.total).toBeGreaterThan(0);
  });

  it("order_outcomes counts and rates final statuses", async () => {
    const rows = await k
      .selectFrom("reporting.order_outcomes")
      .select([
        "merchant_id",
        "location_id",
        "channel",
        asText("local_date").as("local_date"),
        "orders_count",
        "delivered_count",
        "rejected_count",
        "cancelled_count",
        asText("delivered_rate").as("delivered_rate"),
        asText("rejected_rate").as("rejected_rate"),
        asText("cancelled_rate").as("cancelled_rate"),
      ])
      .execute();
    const keys = ["merchant_id", "location_id", "channel", "local_date"];
    expect(byKey(rows, keys)).toEqual(byKey(expectedOutcomes(orders, LOCATIONS), keys));
  });

  it("order_outcomes counts a delivery order at picked_up as in progress (en route), a pickup order there as done", async () => {
    const rows: [string, string, string][] = [
      ["ord_io_1", "delivery", "picked_up"],
      ["ord_io_2", "delivery", "placed"],
      ["ord_io_3", "pickup", "picked_up"],
      ["ord_io_4", "delivery", "delivered"],
    ];
    for (const [id, type, status] of rows) {
      await db.sql`
        insert into replica.orders (id, merchant_id, location_id, channel, channel_ref, type, status, version,
                                    created_at, updated_at, raw)
        values (${id}, 'mer_in_progress', 'loc_none', 'keeta', ${id}, ${type}, ${status}, 1,
                '2026-11-22T10:00:00Z', '2026-11-22T10:00:00Z', '{}')`;
    }
    const [outcome] = await db.sql<
      { in_progress_count: number; picked_up_count: number; orders_count: number }[]
    >`
      select in_progress_count::int, picked_up_count::int, orders_count::int
      from reporting.order_outcomes where merchant_id = 'mer_in_progress'`;
    expect(outcome).toEqual({ in_progress_count: 2, picked_up_count: 2, orders_count: 4 });
    await db.sql`delete from replica.orders where merchant_id = 'mer_in_progress'`;
  });

  it("stage_duration_percentiles match percentile_cont computed from the status history", async () => {
    const rows: Record<string, unknown>[] = await k
      .selectFrom("reporting.stage_duration_percentiles")
      .selectAll()
      .execute();
    const expected = expectedStagePercentiles(orders);
    expect(rows).toHaveLength(expected.length);
    for (const want of expected) {
      const got = rows.find(
        (r) =>
          r.merchant_id === want.merchant_id &&
          r.location_id === want.location_id &&
          r.channel === want.channel,
      );
      expect(got, JSON.stringify(want)).toBeDefined();
      for (const [column, value] of Object.entries(want)) {
        if (column.endsWith("_seconds") && value !== null) {
          // Both sides round to 0.1 s; allow one rounding step of float noise.
          expect(Math.abs(Number(got![column]) - Number(value)), column).toBeLessThanOrEqual(0.1 + 1e-9);
        } else {
          expect(got![column], column).toEqual(value);
        }
      }
    }
    expect(expected.some((r) => Number(r.placed_to_accepted_samples) > 3)).toBe(true);
  });

  it("top_items and top_modifiers sum units and revenue of sales, with both names", async () => {
    const items = await k
      .selectFrom("reporting.top_items")
      .select([
        "merchant_id",
        "sku",
        "name_en",
        "name_ar",
        "currency",
        "quantity_sold",
        "revenue_amount",
        "orders_count",
      ])
      .execute();
    const itemKeys = ["merchant_id", "name_en", "sku"];
    expect(byKey(items, itemKeys)).toEqual(byKey(expectedTopItems(orders), itemKeys));
    const modifiers = await k
      .selectFrom("reporting.top_modifiers")
      .select([
        "merchant_id",
        "name_en",
        "name_ar",
        "currency",
        "quantity_sold",
        "revenue_amount",
        "orders_count",
      ])
      .execute();
    const modKeys = ["merchant_id", "name_en"];
    expect(byKey(modifiers, modKeys)).toEqual(byKey(expectedTopModifiers(orders), modKeys));
    const best = await k
      .selectFrom("reporting.top_items")
      .select(["name_ar", "quantity_rank"])
      .where("merchant_id", "=", "mer_a")
      .orderBy("quantity_sold", "desc")
      .limit(1)
      .executeTakeFirst();
    expect(best!.quantity_rank).toBe(1);
    expect(best!.name_ar).toMatch(/\p{Script=Arabic}/u);
  });

  it("follows the replica as an order changes: a delivered order cancelled later leaves the sales", async () => {
    const target = orders.find((o) => o.id === "ord_midnight")!;
    const before = await olayaJahez21()
      .select(["total_amount", "sales_orders_count"])
      .$narrowType<Sums>()
      .execute();
    await db.sql`update replica.orders set status = 'cancelled', version = version + 1 where id = ${target.id}`;
    const after = await olayaJahez21()
      .select(["total_amount", "sales_orders_count"])
      .$narrowType<Sums>()
      .execute();
    expect(after[0]!.total_amount).toBe(before[0]!.total_amount - target.total);
    expect(after[0]!.sales_orders_count).toBe(before[0]!.sales_orders_count - 1);
    await db.sql`update replica.orders set status = 'delivered' where id = ${target.id}`;
  });
});
