import { z } from "zod";
import { LocalizedTextSchema, MoneySchema } from "./common.ts";
import { openEnum } from "./open-enum.ts";

export const ORDER_STATUSES = [
  "placed",
  "accepted",
  "preparing",
  "ready",
  "picked_up",
  "delivered",
  "rejected",
  "cancelled",
] as const;
/** A known order status, or a newer one upstream added (kept as-is). */
export type OrderStatus = (typeof ORDER_STATUSES)[number] | (string & {});

// The one validator of an order, for the worker and catch-up alike: the spec's shape, plus what the replica's
// SQL relies on (non-empty ids, a non-negative version, parseable date-times, no U+0000). Where the client's
// schema and the replica's check differed, the stricter rule of the two is kept.
const text = z.string().min(1, "expected a non-empty string");
const dateTime = z.string().refine((v) => !Number.isNaN(Date.parse(v)), "expected a date-time");
const count = {
  error: (issue: { input?: unknown }) =>
    `expected a non-negative integer, got ${JSON.stringify(issue.input)}`,
};
const OrderMoneySchema = MoneySchema.extend({ currency: z.string().min(1, "expected a currency code") });

export const OrderModifierSchema = z.looseObject({
  name: LocalizedTextSchema.nullish(),
  quantity: z.number().int().nullish(),
  unit_price: OrderMoneySchema,
});
export type OrderModifier = z.output<typeof OrderModifierSchema>;

export const OrderItemSchema = z.looseObject({
  name: LocalizedTextSchema,
  sku: z.string().nullish(),
  quantity: z.number().int(),
  unit_price: OrderMoneySchema,
  modifiers: z.array(OrderModifierSchema).nullish(),
  notes: z.string().nullish(),
});
export type OrderItem = z.output<typeof OrderItemSchema>;

export const OrderStatusChangeSchema = z.looseObject({
  status: text.pipe(openEnum("order.status_history.status", ORDER_STATUSES)),
  at: dateTime,
});
export type OrderStatusChange = z.output<typeof OrderStatusChangeSchema>;

export const OrderTotalsSchema = z.looseObject({
  subtotal: OrderMoneySchema,
  discount: OrderMoneySchema.nullish(),
  delivery_fee: OrderMoneySchema.nullish(),
  tax: OrderMoneySchema.nullish(),
  total: OrderMoneySchema,
});
export type OrderTotals = z.output<typeof OrderTotalsSchema>;

/** Orders OrderSchema has passed, so a second check (the apply's) costs nothing: orders are not changed. */
const checkedOrders = new WeakSet<object>();

/** True for an order object OrderSchema produced (it passed every rule). */
export function isCheckedOrder(value: unknown): boolean {
  return typeof value === "object" && value !== null && checkedOrders.has(value);
}

export const OrderSchema = z
  .looseObject({
    id: text,
    version: z.number(count).int(count).nonnegative(count),
    merchant_id: text,
    location_id: text,
    channel: text,
    channel_connection_id: z.string().nullish(),
    channel_ref: z.string(),
    type: openEnum("order.type", ["delivery", "pickup", "dine_in"]),
    status: text.pipe(openEnum("order.status", ORDER_STATUSES)),
    status_history: z.array(OrderStatusChangeSchema).nullish(),
    scheduled_for: dateTime.nullish(),
    items: z.array(OrderItemSchema),
    totals: OrderTotalsSchema,
    payment: z
      .looseObject({
        method: openEnum("order.payment.method", ["online", "cash", "card_on_delivery"]).nullish(),
        paid: z.boolean().nullish(),
      })
      .nullish(),
    notes: z.string().nullish(),
    created_at: dateTime,
    updated_at: dateTime,
    extensions: z.record(z.string(), z.unknown()).nullish(),
  })
  .superRefine((order, ctx) => {
    // Postgres text and jsonb cannot store U+0000. JSON.stringify escapes it: one native pass rules most
    // orders out before the walk that names the field.
    const nul = JSON.stringify(order).includes("\\u0000") ? findNul(order, []) : undefined;
    if (nul) {
      ctx.addIssue({
        code: "custom",
        path: nul,
        message: "contains a NUL character (U+0000), which Postgres cannot store",
      });
    }
  })
  .transform((order) => {
    checkedOrders.add(order);
    return order;
  });
export type Order = z.output<typeof OrderSchema>;

/** The path of the first string (value or key) holding U+0000. */
function findNul(value: unknown, path: PropertyKey[]): PropertyKey[] | undefined {
  if (typeof value === "string") return value.includes("\u0000") ? path : undefined;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const found = findNul(value[i], [...path, i]);
      if (found) return found;
    }
    return undefined;
  }
  if (typeof value === "object" && value !== null) {
    for (const [key, child] of Object.entries(value)) {
      if (key.includes("\u0000")) return [...path, key];
      const found = findNul(child, [...path, key]);
      if (found) return found;
    }
  }
  return undefined;
}
