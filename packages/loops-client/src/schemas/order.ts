import { z } from "zod";
import { LocalizedTextSchema, MoneySchema } from "./common.ts";
import { openEnum } from "./open-enum.ts";
import { storableOrderIssue } from "./storable-order-issue.ts";

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

// The one validator of an order, for the worker and catch-up alike: the spec's shape here, then what the
// replica's SQL relies on (storableOrderIssue). Where the client's schema and the replica's check differed,
// the stricter rule of the two is kept.
export const OrderModifierSchema = z.looseObject({
  name: LocalizedTextSchema.nullish(),
  quantity: z.number().int().nullish(),
  unit_price: MoneySchema,
});
export type OrderModifier = z.output<typeof OrderModifierSchema>;

export const OrderItemSchema = z.looseObject({
  name: LocalizedTextSchema,
  sku: z.string().nullish(),
  quantity: z.number().int(),
  unit_price: MoneySchema,
  modifiers: z.array(OrderModifierSchema).nullish(),
  notes: z.string().nullish(),
});
export type OrderItem = z.output<typeof OrderItemSchema>;

export const OrderStatusChangeSchema = z.looseObject({
  status: openEnum("order.status_history.status", ORDER_STATUSES),
  at: z.string(),
});
export type OrderStatusChange = z.output<typeof OrderStatusChangeSchema>;

export const OrderTotalsSchema = z.looseObject({
  subtotal: MoneySchema,
  discount: MoneySchema.nullish(),
  delivery_fee: MoneySchema.nullish(),
  tax: MoneySchema.nullish(),
  total: MoneySchema,
});
export type OrderTotals = z.output<typeof OrderTotalsSchema>;

export const OrderSchema = z.looseObject({
  id: z.string(),
  version: z.number().int(),
  merchant_id: z.string(),
  location_id: z.string(),
  channel: z.string(),
  channel_connection_id: z.string().nullish(),
  channel_ref: z.string(),
  type: openEnum("order.type", ["delivery", "pickup", "dine_in"]),
  status: openEnum("order.status", ORDER_STATUSES),
  status_history: z.array(OrderStatusChangeSchema).nullish(),
  scheduled_for: z.string().nullish(),
  items: z.array(OrderItemSchema),
  totals: OrderTotalsSchema,
  payment: z
    .looseObject({
      method: openEnum("order.payment.method", ["online", "cash", "card_on_delivery"]).nullish(),
      paid: z.boolean().nullish(),
    })
    .nullish(),
  notes: z.string().nullish(),
  created_at: z.string(),
  updated_at: z.string(),
  extensions: z.record(z.string(), z.unknown()).nullish(),
});
export type Order = z.output<typeof OrderSchema>;

/** Orders that passed parseOrder: a second check (the apply's) costs nothing, orders are not changed. */
const checkedOrders = new WeakSet<object>();

/** An order that failed parseOrder: the first offending path and what is wrong there. */
export interface OrderRefusal {
  success: false;
  path: PropertyKey[];
  message: string;
}

/**
 * The one order validator: OrderSchema's shape, then storableOrderIssue (outside zod: a refinement on the
 * schema doubled its cost). An order that passed once passes again at once.
 */
export function parseOrder(value: unknown): { success: true; data: Order } | OrderRefusal {
  if (typeof value === "object" && value !== null && checkedOrders.has(value)) {
    return { success: true, data: value as Order };
  }
  const parsed = OrderSchema.safeParse(value);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    return { success: false, path: issue?.path ?? [], message: issue?.message ?? "invalid" };
  }
  const result = checkStorable(parsed.data);
  if (result.success) checkedOrders.add(value as object);
  return result;
}

/** storableOrderIssue on an order OrderSchema has already shaped (the client's answers), remembering it. */
export function checkStorable(order: Order): { success: true; data: Order } | OrderRefusal {
  const issue = storableOrderIssue(order);
  if (issue) return { success: false, ...issue };
  checkedOrders.add(order);
  return { success: true, data: order };
}
