/** Bodies shaped as the spec describes, for handlers to answer with. */

export function orderBody(id: string, overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    id,
    version: 3,
    merchant_id: "mer_1",
    location_id: "loc_1",
    channel: "hungerstation",
    channel_connection_id: "chc_1",
    channel_ref: "HS-1001",
    type: "delivery",
    status: "accepted",
    status_history: [
      { status: "placed", at: "2026-11-22T05:00:00Z" },
      { status: "accepted", at: "2026-11-22T05:01:00Z" },
    ],
    scheduled_for: null,
    items: [
      {
        name: { en: "Shawarma", ar: "شاورما" },
        sku: null,
        quantity: 2,
        unit_price: { amount: 1500, currency: "SAR" },
        modifiers: [
          { name: { en: "Garlic", ar: null }, quantity: 1, unit_price: { amount: 0, currency: "SAR" } },
        ],
        notes: null,
      },
    ],
    totals: {
      subtotal: { amount: 3000, currency: "SAR" },
      delivery_fee: { amount: 500, currency: "SAR" },
      total: { amount: 3500, currency: "SAR" },
    },
    payment: { method: "online", paid: true },
    notes: null,
    created_at: "2026-11-22T05:00:00Z",
    updated_at: "2026-11-22T05:01:00Z",
    extensions: {},
    ...overrides,
  };
}

export function eventBody(id: string, overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    id,
    type: "order.status_changed",
    created_at: "2026-11-22T05:01:00Z",
    merchant_id: "mer_1",
    location_id: "loc_1",
    connection_id: "con_1",
    origin: { type: "channel", application_id: null },
    data: {
      order_id: "ord_1",
      channel_ref: "HS-1001",
      previous_status: "placed",
      status: "accepted",
      version: 2,
    },
    ...overrides,
  };
}
