// Reading the mirror from your backend: typed Kysely queries over replica.* and reporting.*.
// Run: DATABASE_URL=postgres://… node examples/read-mirror/read-mirror.ts <merchant-id> [<order-id>]
import { type Database, kyselyOver, POSTGRES_TYPES } from "@loops-sync/schema";
import { type Kysely, sql } from "kysely";
import { jsonArrayFrom } from "kysely/helpers/postgres";
import postgres from "postgres";

/** One order with its items (each with its modifiers), its status history, and why it looks as it does. */
export async function readOrder(db: Kysely<Database>, orderId: string) {
  return await db
    .selectFrom("replica.orders as o")
    .select([
      "o.id",
      "o.merchant_id",
      "o.location_id",
      "o.channel",
      "o.status",
      "o.version",
      "o.total_amount",
      "o.currency",
      "o.created_at",
      // Provenance: the event whose fetch last changed this row, and how the change came
      // (webhook, catchup, backfill, repair).
      "o.last_change_event_id",
      "o.last_change_source",
    ])
    .select((eb) => [
      jsonArrayFrom(
        eb
          .selectFrom("replica.order_items as i")
          .select(["i.position", "i.name_en", "i.name_ar", "i.quantity", "i.unit_price_amount", "i.currency"])
          .select((items) => [
            jsonArrayFrom(
              items
                .selectFrom("replica.order_item_modifiers as m")
                .select(["m.name_en", "m.name_ar", "m.quantity", "m.unit_price_amount"])
                .whereRef("m.order_id", "=", "i.order_id")
                .whereRef("m.item_position", "=", "i.position")
                .orderBy("m.position"),
            ).as("modifiers"),
          ])
          .whereRef("i.order_id", "=", "o.id")
          .orderBy("i.position"),
      ).as("items"),
      jsonArrayFrom(
        eb
          .selectFrom("replica.order_status_history as h")
          // Inside JSON a timestamp arrives as an ISO 8601 string, so it is typed as one.
          .select(["h.status", sql<string>`h.at`.as("at")])
          .whereRef("h.order_id", "=", "o.id")
          .orderBy("h.position"),
      ).as("status_history"),
    ])
    .where("o.id", "=", orderId)
    .executeTakeFirst();
}

/** Today's orders and sales per location, "today" being each location's own local calendar day. */
export async function todaysOrdersPerLocation(db: Kysely<Database>, merchantId: string) {
  return await db
    .selectFrom("reporting.daily_sales")
    .select(["location_id", "location_name_en", "timezone", "currency"])
    .select([
      sql<number>`sum(orders_count)::int`.as("orders"),
      sql<number>`sum(sales_orders_count)::int`.as("sales_orders"),
      sql<number>`sum(total_amount)::bigint`.as("total_amount"),
    ])
    .where("merchant_id", "=", merchantId)
    .where(sql<boolean>`local_date = (now() at time zone timezone)::date`)
    .groupBy(["location_id", "location_name_en", "timezone", "currency"])
    .orderBy("location_id")
    // A view's columns may be null as far as Postgres records; these never are in daily_sales.
    .$narrowType<{ location_id: string; timezone: string; currency: string }>()
    .execute();
}

/** How fresh the mirror of one merchant is, from reporting.sync_health. */
export async function merchantFreshness(db: Kysely<Database>, merchantId: string) {
  const row = await db
    .selectFrom("reporting.sync_health")
    .select([
      "merchant_status",
      "last_webhook_received_at",
      "last_catchup_finished_at",
      "last_catchup_status",
      "last_applied_at",
      "applied_lag_seconds",
      "pending_events",
      "failed_events",
    ])
    .where("merchant_id", "=", merchantId)
    .executeTakeFirst();
  if (!row) return undefined;
  // numeric arrives as a string (exact); seconds are plenty here.
  const lag = row.applied_lag_seconds === null ? null : Number(row.applied_lag_seconds);
  return { ...row, applied_lag_seconds: lag };
}

async function main(merchantId: string, orderId: string | undefined): Promise<void> {
  const url = process.env.DATABASE_URL;
  if (!url) throw new Error("set DATABASE_URL to the loops-sync database");
  // The parsers the generated types assume (bigint as a number); your pool, not a second one.
  const pool = postgres(url, { max: 2, types: POSTGRES_TYPES });
  const db = kyselyOver<Database>(pool);
  try {
    if (orderId) console.log(JSON.stringify({ order: await readOrder(db, orderId) }));
    console.log(JSON.stringify({ today: await todaysOrdersPerLocation(db, merchantId) }));
    console.log(JSON.stringify({ freshness: await merchantFreshness(db, merchantId) }));
  } finally {
    await pool.end();
  }
}

if (import.meta.main) {
  const [merchantId, orderId] = process.argv.slice(2);
  if (!merchantId) {
    console.error("usage: node examples/read-mirror/read-mirror.ts <merchant-id> [<order-id>]");
    process.exit(2);
  }
  await main(merchantId, orderId);
}
