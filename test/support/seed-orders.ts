import type { Sql } from "@loops-sync/db";

/** A line of an order as the test builds it (money in minor units). */
export interface SeedItem {
  nameEn: string;
  nameAr: string;
  sku: string | null;
  quantity: number;
  unitPrice: number;
  modifiers: { nameEn: string; nameAr: string; quantity: number; unitPrice: number }[];
}

export interface SeedOrder {
  id: string;
  merchantId: string;
  locationId: string;
  channel: string;
  status: string;
  createdAt: string;
  currency: string;
  subtotal: number;
  discount: number;
  deliveryFee: number;
  tax: number;
  total: number;
  items: SeedItem[];
  history: { status: string; at: string }[];
}

export interface SeedLocation {
  id: string;
  merchantId: string;
  timezone: string;
  nameEn: string;
  nameAr: string;
}

export async function insertLocations(sql: Sql, locations: readonly SeedLocation[]): Promise<void> {
  for (const l of locations) {
    await sql`
      insert into replica.locations (id, merchant_id, name_en, name_ar, status, timezone, raw)
      values (${l.id}, ${l.merchantId}, ${l.nameEn}, ${l.nameAr}, 'open', ${l.timezone}, '{}')`;
  }
}

/** Writes orders the way the worker's upsert does: the order row, then its items, modifiers and history. */
export async function insertOrders(sql: Sql, orders: readonly SeedOrder[]): Promise<void> {
  await sql.begin(async (tx) => {
    for (const o of orders) {
      await tx`
        insert into replica.orders (
          id, merchant_id, location_id, channel, channel_ref, type, status, version, currency,
          subtotal_amount, discount_amount, delivery_fee_amount, tax_amount, total_amount,
          created_at, updated_at, raw)
        values (
          ${o.id}, ${o.merchantId}, ${o.locationId}, ${o.channel}, ${o.id.toUpperCase()}, 'delivery', ${o.status}, 1,
          ${o.currency}, ${o.subtotal}, ${o.discount}, ${o.deliveryFee}, ${o.tax}, ${o.total},
          ${o.createdAt}, ${o.history.at(-1)?.at ?? o.createdAt}, '{}')`;
      for (const [position, item] of o.items.entries()) {
        await tx`
          insert into replica.order_items (order_id, position, name_en, name_ar, sku, quantity, unit_price_amount, currency)
          values (${o.id}, ${position}, ${item.nameEn}, ${item.nameAr}, ${item.sku}, ${item.quantity}, ${item.unitPrice}, ${o.currency})`;
        for (const [mp, m] of item.modifiers.entries()) {
          await tx`
            insert into replica.order_item_modifiers (
              order_id, item_position, position, name_en, name_ar, quantity, unit_price_amount, currency)
            values (${o.id}, ${position}, ${mp}, ${m.nameEn}, ${m.nameAr}, ${m.quantity}, ${m.unitPrice}, ${o.currency})`;
        }
      }
      for (const [position, h] of o.history.entries()) {
        await tx`
          insert into replica.order_status_history (order_id, position, status, at)
          values (${o.id}, ${position}, ${h.status}, ${h.at})`;
      }
    }
  });
}
