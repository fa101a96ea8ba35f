import type { OrderInput } from "@loops-sync/replica";

const STATUSES = ["placed", "accepted", "preparing", "ready", "picked_up", "delivered"];

/** A spec-shaped order at `version`: its items, totals and status history all depend on the version. */
export function makeOrder({
  id = "ord_test_1",
  version = 1,
  merchantId = "mer_test",
  locationId = "loc_test",
  status,
}: {
  id?: string;
  version?: number;
  merchantId?: string;
  locationId?: string;
  status?: string;
} = {}): OrderInput & Record<string, unknown> {
  const history = Array.from({ length: Math.min(version, STATUSES.length) }, (_, i) => ({
    status: STATUSES[i]!,
    at: new Date(Date.UTC(2026, 10, 22, 10, i)).toISOString(),
  }));
  const items = Array.from({ length: version }, (_, i) => ({
    name: { en: `Item ${i}`, ar: `صنف ${i}` },
    sku: `sku-${i}`,
    quantity: i + 1,
    unit_price: { amount: 1000 + i, currency: "SAR" },
    modifiers: [
      {
        name: { en: `Mod ${i}`, ar: `إضافة ${i}` },
        quantity: 1,
        unit_price: { amount: 150, currency: "SAR" },
      },
    ],
    notes: null,
  }));
  const subtotal = items.reduce((sum, item) => sum + item.quantity * item.unit_price.amount, 0);
  return {
    id,
    version,
    merchant_id: merchantId,
    location_id: locationId,
    channel: "hungerstation",
    channel_connection_id: "chc_test",
    channel_ref: `HS-${id}`,
    type: "delivery",
    status: status ?? history.at(-1)!.status,
    status_history: history,
    scheduled_for: null,
    items,
    totals: {
      subtotal: { amount: subtotal, currency: "SAR" },
      discount: { amount: 0, currency: "SAR" },
      delivery_fee: { amount: 900, currency: "SAR" },
      tax: { amount: Math.round(subtotal * 0.15), currency: "SAR" },
      total: { amount: subtotal + 900 + Math.round(subtotal * 0.15), currency: "SAR" },
    },
    payment: { method: "online", paid: true },
    notes: null,
    created_at: "2026-11-22T10:00:00.000Z",
    updated_at: new Date(Date.UTC(2026, 10, 22, 10, version)).toISOString(),
    extensions: { hungerstation: { rider: "r1" } },
    future_field: "kept in raw",
  };
}
