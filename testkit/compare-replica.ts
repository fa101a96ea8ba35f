// An independent check of the replica against the sandbox's truth: every column, the raw JSON, items with
// their modifiers, and the status history. Written apart from the worker's own mapping on purpose, so a
// mapping bug shows up here instead of being agreed with.

import type { Sql } from "@loops-sync/db";
import type { Order } from "@loops-sync/sandbox";

const ms = (v: unknown): number | null =>
  v === null || v === undefined ? null : v instanceof Date ? v.getTime() : new Date(String(v)).getTime();

export interface CompareOptions {
  /** Also report replica orders missing from `truth`. Default: true. */
  exhaustive?: boolean;
}

/** Lists every difference between the replica and `truth`; empty when they match exactly. */
export async function compareReplicaWithTruth(
  sql: Sql,
  truth: readonly Order[],
  { exhaustive = true }: CompareOptions = {},
): Promise<string[]> {
  const problems: string[] = [];
  const ids = truth.map((o) => o.id);
  const rows = await sql`select * from replica.orders where id = any(${ids}::text[])`;
  const items = await sql`
    select * from replica.order_items where order_id = any(${ids}::text[]) order by order_id, position`;
  const history = await sql`
    select * from replica.order_status_history where order_id = any(${ids}::text[]) order by order_id, position`;
  const [extra] = await sql<{ n: string }[]>`
    select count(*) as n from replica.orders where not (id = any(${ids}::text[]))`;
  if (exhaustive && Number(extra?.n ?? 0) > 0)
    problems.push(`${extra?.n} replica orders the sandbox never had`);
  const byId = new Map(rows.map((r) => [r.id as string, r]));
  const group = <T extends { order_id: string }>(list: readonly T[]) => {
    const m = new Map<string, T[]>();
    for (const r of list) m.set(r.order_id, [...(m.get(r.order_id) ?? []), r]);
    return m;
  };
  const itemsOf = group(items as unknown as { order_id: string }[]) as Map<string, Record<string, unknown>[]>;
  const historyOf = group(history as unknown as { order_id: string }[]) as Map<
    string,
    Record<string, unknown>[]
  >;

  for (const o of truth) {
    const row = byId.get(o.id);
    if (!row) {
      problems.push(`${o.id}: missing from the replica (truth v${o.version} ${o.status})`);
      continue;
    }
    const expected: Record<string, unknown> = {
      merchant_id: o.merchant_id,
      location_id: o.location_id,
      channel: o.channel,
      channel_connection_id: o.channel_connection_id,
      channel_ref: o.channel_ref,
      type: o.type,
      status: o.status,
      version: o.version,
      scheduled_for: ms(o.scheduled_for),
      currency: o.totals.total.currency,
      subtotal_amount: o.totals.subtotal.amount,
      discount_amount: o.totals.discount.amount,
      delivery_fee_amount: o.totals.delivery_fee.amount,
      tax_amount: o.totals.tax.amount,
      total_amount: o.totals.total.amount,
      payment_method: o.payment.method,
      payment_paid: o.payment.paid,
      notes: o.notes,
      created_at: ms(o.created_at),
      updated_at: ms(o.updated_at),
    };
    const actual: Record<string, unknown> = { ...row };
    for (const k of ["scheduled_for", "created_at", "updated_at"]) actual[k] = ms(row[k]);
    for (const k of ["version", "subtotal_amount", "discount_amount", "delivery_fee_amount", "tax_amount"]) {
      actual[k] = row[k] === null ? null : Number(row[k]);
    }
    actual.total_amount = row.total_amount === null ? null : Number(row.total_amount);
    for (const [k, v] of Object.entries(expected)) {
      if (actual[k] !== v) problems.push(`${o.id}.${k}: replica ${String(actual[k])}, truth ${String(v)}`);
    }
    if (JSON.stringify(row.extensions) !== JSON.stringify(o.extensions)) {
      problems.push(`${o.id}.extensions differ`);
    }
    if (!deepEqual(row.raw, JSON.parse(JSON.stringify(o)))) problems.push(`${o.id}.raw differs from truth`);

    const gotItems = (itemsOf.get(o.id) ?? []).map((i) => ({
      name_en: i.name_en,
      name_ar: i.name_ar,
      sku: i.sku,
      quantity: i.quantity,
      unit_price_amount: Number(i.unit_price_amount),
      currency: i.currency,
      notes: i.notes,
      modifiers: i.modifiers,
    }));
    const wantItems = o.items.map((i) => ({
      name_en: i.name.en,
      name_ar: i.name.ar,
      sku: i.sku,
      quantity: i.quantity,
      unit_price_amount: i.unit_price.amount,
      currency: i.unit_price.currency,
      notes: i.notes,
      modifiers: JSON.parse(JSON.stringify(i.modifiers)),
    }));
    if (!deepEqual(gotItems, wantItems)) problems.push(`${o.id}: items differ`);

    const gotHistory = (historyOf.get(o.id) ?? []).map((h) => `${h.status}@${ms(h.at)}`);
    const wantHistory = o.status_history.map((h) => `${h.status}@${ms(h.at)}`);
    if (gotHistory.join(",") !== wantHistory.join(",")) {
      problems.push(`${o.id}: status history ${gotHistory.join(",")} ≠ truth ${wantHistory.join(",")}`);
    }
  }
  return problems;
}

function deepEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== "object" || typeof b !== "object" || a === null || b === null) return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  const ka = Object.keys(a);
  const kb = Object.keys(b);
  if (ka.length !== kb.length) return false;
  return ka.every((k) => deepEqual((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k]));
}
