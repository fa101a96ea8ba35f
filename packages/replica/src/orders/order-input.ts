import { formatIssuePath, LoopsError, parseOrder } from "@loops-sync/loops-client";

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

/**
 * The order as the replica can store it, or an `invalid_order` LoopsError naming the field. The rules are
 * the client's `parseOrder`, the one order validator: an order the client already parsed passes at once.
 */
export function checkOrder(input: unknown): OrderInput {
  const parsed = parseOrder(input);
  if (parsed.success) return input as OrderInput;
  const id = (input as { id?: unknown } | null)?.id;
  const orderId = typeof id === "string" && id.length > 0 ? id : undefined;
  throw invalidOrder(formatIssuePath(parsed.path) || "body", parsed.message, orderId);
}
