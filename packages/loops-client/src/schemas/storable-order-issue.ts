/** What the replica's SQL needs of an order beyond the spec's shape: the first field that breaks it. */
export interface OrderIssue {
  path: PropertyKey[];
  message: string;
}

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => typeof v === "object" && v !== null && !Array.isArray(v);
const isText = (v: unknown): boolean => typeof v === "string" && v.length > 0;
const isDate = (v: unknown): boolean => typeof v === "string" && !Number.isNaN(Date.parse(v));
const NON_EMPTY = "expected a non-empty string";

/**
 * Checked in plain code after OrderSchema's shape (zod refinements on every field cost twice as much):
 * non-empty ids, a non-negative version, date-times, currency codes, and no U+0000, which Postgres text
 * and jsonb cannot store.
 */
export function storableOrderIssue(order: Json): OrderIssue | undefined {
  for (const field of ["id", "merchant_id", "location_id", "channel", "status"]) {
    if (!isText(order[field])) return { path: [field], message: NON_EMPTY };
  }
  // JSON.stringify escapes U+0000 as \u0000: one native pass rules most orders out before the walk.
  const nul = JSON.stringify(order).includes("\\u0000") ? findNul(order, []) : undefined;
  if (nul) return { path: nul, message: "contains a NUL character (U+0000), which Postgres cannot store" };
  if ((order.version as number) < 0) {
    return { path: ["version"], message: `expected a non-negative integer, got ${order.version}` };
  }
  for (const field of ["created_at", "updated_at"]) {
    if (!isDate(order[field])) return { path: [field], message: "expected a date-time" };
  }
  if (order.scheduled_for != null && !isDate(order.scheduled_for)) {
    return { path: ["scheduled_for"], message: "expected a date-time or null" };
  }
  const history = Array.isArray(order.status_history) ? order.status_history : [];
  for (let i = 0; i < history.length; i++) {
    const entry = history[i] as Json;
    if (!isText(entry.status)) return { path: ["status_history", i, "status"], message: NON_EMPTY };
    if (!isDate(entry.at)) return { path: ["status_history", i, "at"], message: "expected a date-time" };
  }
  return moneyIssue(order);
}

/** The first money amount whose currency is empty (the shape already made amounts integers). */
function moneyIssue(order: Json): OrderIssue | undefined {
  const totals = isObject(order.totals) ? order.totals : {};
  for (const part of ["subtotal", "discount", "delivery_fee", "tax", "total"]) {
    const issue = currencyIssue(totals[part], ["totals", part]);
    if (issue) return issue;
  }
  const items = Array.isArray(order.items) ? order.items : [];
  for (let i = 0; i < items.length; i++) {
    const item = items[i] as Json;
    const issue = currencyIssue(item.unit_price, ["items", i, "unit_price"]);
    if (issue) return issue;
    const modifiers = Array.isArray(item.modifiers) ? item.modifiers : [];
    for (let j = 0; j < modifiers.length; j++) {
      const found = currencyIssue((modifiers[j] as Json).unit_price, [
        "items",
        i,
        "modifiers",
        j,
        "unit_price",
      ]);
      if (found) return found;
    }
  }
  return undefined;
}

function currencyIssue(money: unknown, path: PropertyKey[]): OrderIssue | undefined {
  if (!isObject(money) || isText(money.currency)) return undefined;
  return { path: [...path, "currency"], message: "expected a currency code" };
}

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
  if (isObject(value)) {
    for (const [key, child] of Object.entries(value)) {
      if (key.includes("\u0000")) return [...path, key];
      const found = findNul(child, [...path, key]);
      if (found) return found;
    }
  }
  return undefined;
}
