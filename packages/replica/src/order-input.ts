import { LoopsError } from "@loops-sync/loops-client";

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

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => typeof v === "object" && v !== null && !Array.isArray(v);
const isText = (v: unknown): v is string => typeof v === "string" && v.length > 0;
const isDate = (v: unknown): boolean => typeof v === "string" && !Number.isNaN(Date.parse(v));
const isCount = (v: unknown): boolean => Number.isSafeInteger(v);

function checkMoney(value: unknown, field: string, id: string, required: boolean): void {
  if (value === undefined || value === null) {
    if (required) throw invalidOrder(field, "missing", id);
    return;
  }
  if (!isObject(value) || !isCount(value.amount)) {
    throw invalidOrder(field, "expected {amount: integer minor units, currency}", id);
  }
  if (!isText(value.currency)) throw invalidOrder(`${field}.currency`, "expected a currency code", id);
}

/**
 * Checks what the SQL relies on before any statement runs, so a malformed upstream answer becomes one
 * clear error instead of a half-run transaction. Unknown fields and unknown status values pass.
 */
/** The path of the first string (value or key) holding U+0000, which Postgres text and jsonb cannot store. */
function findNul(value: unknown, path: string): string | undefined {
  if (typeof value === "string") return value.includes("\u0000") ? path : undefined;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const found = findNul(value[i], `${path}[${i}]`);
      if (found) return found;
    }
    return undefined;
  }
  if (isObject(value)) {
    for (const [key, child] of Object.entries(value)) {
      const where = path ? `${path}.${key}` : key;
      if (key.includes("\u0000")) return where;
      const found = findNul(child, where);
      if (found) return found;
    }
  }
  return undefined;
}

/** Orders checkOrder has passed: an answer is checked when fetched, and again by the apply it goes to. */
const checked = new WeakSet<object>();

/**
 * The order as the replica can store it, or an `invalid_order` LoopsError naming the field. An object that passed once
 * passes again without a second walk: orders are never changed after they are parsed.
 */
export function checkOrder(input: unknown): OrderInput {
  if (typeof input === "object" && input !== null && checked.has(input)) return input as OrderInput;
  if (!isObject(input)) throw invalidOrder("body", "expected an object");
  const id = isText(input.id) ? input.id : undefined;
  if (!id) throw invalidOrder("id", "expected a non-empty string");
  // JSON.stringify escapes U+0000 as \u0000: one native pass rules most orders out before the walk that
  // names the field (the walk, on every order, showed up in the worker's CPU profile).
  const nul = JSON.stringify(input).includes("\\u0000") ? findNul(input, "") : undefined;
  if (nul) {
    throw invalidOrder(nul, "contains a NUL character (U+0000), which Postgres cannot store", id);
  }
  if (!isCount(input.version) || (input.version as number) < 0) {
    throw invalidOrder(
      "version",
      `expected a non-negative integer, got ${JSON.stringify(input.version)}`,
      id,
    );
  }
  for (const field of ["merchant_id", "location_id", "channel", "status"] as const) {
    if (!isText(input[field])) throw invalidOrder(field, "expected a non-empty string", id);
  }
  for (const field of ["created_at", "updated_at"] as const) {
    if (!isDate(input[field])) throw invalidOrder(field, "expected a date-time", id);
  }
  if (input.scheduled_for != null && !isDate(input.scheduled_for)) {
    throw invalidOrder("scheduled_for", "expected a date-time or null", id);
  }
  if (input.totals != null) {
    if (!isObject(input.totals)) throw invalidOrder("totals", "expected an object", id);
    for (const part of ["subtotal", "discount", "delivery_fee", "tax", "total"]) {
      checkMoney(input.totals[part], `totals.${part}`, id, false);
    }
  }
  if (input.items != null) {
    if (!Array.isArray(input.items)) throw invalidOrder("items", "expected an array", id);
    input.items.forEach((item: unknown, i: number) => {
      if (!isObject(item)) throw invalidOrder(`items[${i}]`, "expected an object", id);
      if (!isCount(item.quantity)) throw invalidOrder(`items[${i}].quantity`, "expected an integer", id);
      checkMoney(item.unit_price, `items[${i}].unit_price`, id, true);
      if (item.modifiers != null && !Array.isArray(item.modifiers)) {
        throw invalidOrder(`items[${i}].modifiers`, "expected an array", id);
      }
      (Array.isArray(item.modifiers) ? item.modifiers : []).forEach((m: unknown, j: number) => {
        const where = `items[${i}].modifiers[${j}]`;
        if (!isObject(m)) throw invalidOrder(where, "expected an object", id);
        if (m.quantity != null && !isCount(m.quantity)) {
          throw invalidOrder(`${where}.quantity`, "expected an integer", id);
        }
        checkMoney(m.unit_price, `${where}.unit_price`, id, true);
      });
    });
  }
  if (input.status_history != null) {
    if (!Array.isArray(input.status_history)) throw invalidOrder("status_history", "expected an array", id);
    input.status_history.forEach((entry: unknown, i: number) => {
      if (!isObject(entry) || !isText(entry.status) || !isDate(entry.at)) {
        throw invalidOrder(`status_history[${i}]`, "expected {status, at}", id);
      }
    });
  }
  checked.add(input);
  return input as unknown as OrderInput;
}
