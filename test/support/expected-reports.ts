import type { SeedLocation, SeedOrder } from "./seed-orders.ts";

/** The reports computed in TypeScript, independently of the SQL, from the same orders. */

const KNOWN_ZONES = new Set(Intl.supportedValuesOf("timeZone").concat(["UTC"]));

export function zoneOf(locationId: string, locations: readonly SeedLocation[]): string {
  const zone = locations.find((l) => l.id === locationId)?.timezone;
  return zone && KNOWN_ZONES.has(zone) ? zone : "Asia/Riyadh";
}

export function localDate(iso: string, timeZone: string): string {
  // en-CA formats as YYYY-MM-DD.
  return new Intl.DateTimeFormat("en-CA", {
    timeZone,
    year: "numeric",
    month: "2-digit",
    day: "2-digit",
  }).format(new Date(iso));
}

const isSale = (o: SeedOrder) => o.status !== "rejected" && o.status !== "cancelled";

function groupBy<T>(rows: readonly T[], key: (row: T) => string): Map<string, T[]> {
  const out = new Map<string, T[]>();
  for (const r of rows) out.set(key(r), [...(out.get(key(r)) ?? []), r]);
  return out;
}

export function expectedDailySales(orders: readonly SeedOrder[], locations: readonly SeedLocation[]) {
  const groups = groupBy(orders, (o) =>
    [
      o.merchantId,
      o.locationId,
      o.channel,
      localDate(o.createdAt, zoneOf(o.locationId, locations)),
      o.currency,
    ].join("|"),
  );
  return [...groups].map(([key, os]) => {
    const [merchant_id, location_id, channel, local_date, currency] = key.split("|");
    const sales = os.filter(isSale);
    const sum = (f: (o: SeedOrder) => number) => sales.reduce((s, o) => s + f(o), 0);
    return {
      merchant_id,
      location_id,
      channel,
      local_date,
      currency,
      orders_count: os.length,
      sales_orders_count: sales.length,
      rejected_orders_count: os.filter((o) => o.status === "rejected").length,
      cancelled_orders_count: os.filter((o) => o.status === "cancelled").length,
      subtotal_amount: sum((o) => o.subtotal),
      discount_amount: sum((o) => o.discount),
      delivery_fee_amount: sum((o) => o.deliveryFee),
      tax_amount: sum((o) => o.tax),
      total_amount: sum((o) => o.total),
    };
  });
}

export function expectedOutcomes(orders: readonly SeedOrder[], locations: readonly SeedLocation[]) {
  const groups = groupBy(orders, (o) =>
    [o.merchantId, o.locationId, o.channel, localDate(o.createdAt, zoneOf(o.locationId, locations))].join(
      "|",
    ),
  );
  return [...groups].map(([key, os]) => {
    const [merchant_id, location_id, channel, local_date] = key.split("|");
    const n = (s: string) => os.filter((o) => o.status === s).length;
    const rate = (s: string) => (n(s) / os.length).toFixed(4);
    return {
      merchant_id,
      location_id,
      channel,
      local_date,
      orders_count: os.length,
      delivered_count: n("delivered"),
      rejected_count: n("rejected"),
      cancelled_count: n("cancelled"),
      delivered_rate: rate("delivered"),
      rejected_rate: rate("rejected"),
      cancelled_rate: rate("cancelled"),
    };
  });
}

/** percentile_cont: linear interpolation between the two nearest ranks. */
export function percentileCont(values: readonly number[], p: number): number | null {
  if (values.length === 0) return null;
  const sorted = [...values].sort((a, b) => a - b);
  const pos = p * (sorted.length - 1);
  const lo = Math.floor(pos);
  const hi = Math.ceil(pos);
  return sorted[lo]! + (sorted[hi]! - sorted[lo]!) * (pos - lo);
}

function stageSeconds(o: SeedOrder, from: string, to: string): number | null {
  const a = o.history.find((h) => h.status === from);
  const b = o.history.find((h) => h.status === to);
  return a && b ? (Date.parse(b.at) - Date.parse(a.at)) / 1000 : null;
}

export function expectedStagePercentiles(orders: readonly SeedOrder[]) {
  const groups = groupBy(orders, (o) => [o.merchantId, o.locationId, o.channel].join("|"));
  const stages = [
    ["placed", "accepted"],
    ["accepted", "ready"],
    ["ready", "picked_up"],
  ] as const;
  return [...groups].map(([key, os]) => {
    const [merchant_id, location_id, channel] = key.split("|");
    const row: Record<string, string | number | null | undefined> = {
      merchant_id,
      location_id,
      channel,
      orders_count: os.length,
    };
    for (const [from, to] of stages) {
      const values = os.map((o) => stageSeconds(o, from, to)).filter((v): v is number => v !== null);
      row[`${from}_to_${to}_samples`] = values.length;
      for (const p of [50, 90, 99]) {
        const v = percentileCont(values, p / 100);
        row[`${from}_to_${to}_p${p}_seconds`] = v === null ? null : (Math.round(v * 10) / 10).toFixed(1);
      }
    }
    return row;
  });
}

export function expectedTopItems(orders: readonly SeedOrder[]) {
  const lines = orders.filter(isSale).flatMap((o) => o.items.map((i) => ({ o, i })));
  const groups = groupBy(lines, ({ o, i }) =>
    JSON.stringify([o.merchantId, i.sku, i.nameEn, i.nameAr, o.currency]),
  );
  return [...groups].map(([key, ls]) => {
    const [merchant_id, sku, name_en, name_ar, currency] = JSON.parse(key) as (string | null)[];
    return {
      merchant_id,
      sku,
      name_en,
      name_ar,
      currency,
      quantity_sold: ls.reduce((s, { i }) => s + i.quantity, 0),
      revenue_amount: ls.reduce((s, { i }) => s + i.quantity * i.unitPrice, 0),
      orders_count: new Set(ls.map(({ o }) => o.id)).size,
    };
  });
}

export function expectedTopModifiers(orders: readonly SeedOrder[]) {
  const lines = orders
    .filter(isSale)
    .flatMap((o) => o.items.flatMap((i) => i.modifiers.map((m) => ({ o, i, m }))));
  const groups = groupBy(lines, ({ o, m }) => JSON.stringify([o.merchantId, m.nameEn, m.nameAr, o.currency]));
  return [...groups].map(([key, ls]) => {
    const [merchant_id, name_en, name_ar, currency] = JSON.parse(key) as string[];
    return {
      merchant_id,
      name_en,
      name_ar,
      currency,
      quantity_sold: ls.reduce((s, { i, m }) => s + i.quantity * m.quantity, 0),
      revenue_amount: ls.reduce((s, { i, m }) => s + i.quantity * m.quantity * m.unitPrice, 0),
      orders_count: new Set(ls.map(({ o }) => o.id)).size,
    };
  });
}
