import { formatIssuePath, isCheckedOrder, LoopsError, OrderSchema } from "@loops-sync/loops-client";

/** An order as GET /orders and GET /orders/{id} return it; only what the replica needs is named here. */
export interface OrderInput {
  id: string;
  version: number;
  merchant_id: string;
  location_id: string;
  channel: string;
  channel_connection_id?: string | null;
  channel_ref?: string | null;
  type?: string | null;
  status: string;
  status_history?: readonly { status: string; at: string }[] | null;
  scheduled_for?: string | null;
  items?: readonly unknown[] | null;
  totals?: unknown;
  payment?: unknown;
  notes?: string | null;
  created_at: string;
  updated_at: string;
  extensions?: unknown;
}

/**
 * An upstream order the replica cannot store as it is: a `bad_response` LoopsError with code `invalid_order`,
 * `field` naming the offending path.
 */
export function invalidOrder(field: string, problem: string, orderId?: string): LoopsError {
  return new LoopsError({
    kind: "bad_response",
    code: "invalid_order",
    message: `upstream order ${orderId ?? "(no id)"} has an invalid ${field}: ${problem}`,
    field,
    orderId,
  });
}

/** Orders checkOrder has passed as they came (not through the client): checked again for free. */
const checked = new WeakSet<object>();

/**
 * The order as the replica can store it, or an `invalid_order` LoopsError naming the field. The rules are
 * the client's OrderSchema, the one order validator: an order the client already parsed passes at once,
 * and so does an object that passed once (orders are never changed after they are parsed).
 */
export function checkOrder(input: unknown): OrderInput {
  if (typeof input === "object" && input !== null && (checked.has(input) || isCheckedOrder(input))) {
    return input as OrderInput;
  }
  const parsed = OrderSchema.safeParse(input);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const id = (input as { id?: unknown } | null)?.id;
    const orderId = typeof id === "string" && id.length > 0 ? id : undefined;
    const field = issue ? formatIssuePath(issue.path) : "";
    throw invalidOrder(field || "body", issue?.message ?? "invalid", orderId);
  }
  checked.add(input as object);
  return input as OrderInput;
}
