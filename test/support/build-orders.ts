import type { SeedItem, SeedLocation, SeedOrder } from "./seed-orders.ts";

export const LOCATIONS: SeedLocation[] = [
  { id: "loc_olaya", merchantId: "mer_a", timezone: "Asia/Riyadh", nameEn: "Olaya", nameAr: "العليا" },
  { id: "loc_marina", merchantId: "mer_a", timezone: "Asia/Dubai", nameEn: "Marina", nameAr: "المارينا" },
  // A zone this Postgres does not know: reported on Riyadh's calendar instead of failing the views.
  { id: "loc_odd", merchantId: "mer_b", timezone: "Mars/Olympus_Mons", nameEn: "Odd", nameAr: "غريب" },
];
/** Orders here have no replica.locations row at all (default zone applies). */
export const UNKNOWN_LOCATION = "loc_unknown";

const MENU = [
  { nameEn: "Chicken Shawarma", nameAr: "شاورما دجاج", sku: "SHW-1", unitPrice: 1800 },
  { nameEn: "Falafel Wrap", nameAr: "لفافة فلافل", sku: "FLF-1", unitPrice: 1200 },
  { nameEn: "Kabsa", nameAr: "كبسة", sku: null, unitPrice: 3900 },
  { nameEn: "Mint Lemonade", nameAr: "ليمون بالنعناع", sku: "DRK-2", unitPrice: 900 },
];
const MODIFIERS = [
  { nameEn: "Extra garlic", nameAr: "ثوم إضافي", unitPrice: 200 },
  { nameEn: "Cheese", nameAr: "جبنة", unitPrice: 300 },
  { nameEn: "No onion", nameAr: "بدون بصل", unitPrice: 0 },
];

function mulberry32(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const STAGES = ["placed", "accepted", "preparing", "ready", "picked_up", "delivered"];

function history(status: string, createdAt: Date, rnd: () => number): { status: string; at: string }[] {
  const gaps: Record<string, number> = {
    accepted: 240,
    preparing: 60,
    ready: 900,
    picked_up: 420,
    delivered: 1200,
  };
  const steps =
    status === "rejected"
      ? ["placed", "rejected"]
      : status === "cancelled"
        ? ["placed", "accepted", "cancelled"]
        : STAGES.slice(0, STAGES.indexOf(status) + 1);
  let t = createdAt.getTime();
  return steps.map((s, i) => {
    if (i > 0) t += Math.round((gaps[s] ?? 120) * (0.3 + rnd() * 1.7)) * 1000;
    return { status: s, at: new Date(t).toISOString() };
  });
}

function order(
  id: string,
  merchantId: string,
  locationId: string,
  channel: string,
  status: string,
  createdAt: string,
  items: SeedItem[],
  rnd: () => number,
): SeedOrder {
  const subtotal = items.reduce(
    (sum, i) =>
      sum + i.quantity * (i.unitPrice + i.modifiers.reduce((m, x) => m + x.quantity * x.unitPrice, 0)),
    0,
  );
  const discount = rnd() < 0.3 ? Math.round(subtotal * 0.1) : 0;
  const deliveryFee = channel === "hungerstation" ? 700 : 900;
  const tax = Math.round((subtotal - discount + deliveryFee) * 0.15);
  return {
    id,
    merchantId,
    locationId,
    channel,
    status,
    createdAt,
    currency: "SAR",
    subtotal,
    discount,
    deliveryFee,
    tax,
    total: subtotal - discount + deliveryFee + tax,
    items,
    history: history(status, new Date(createdAt), rnd),
  };
}

function items(rnd: () => number): SeedItem[] {
  const count = 1 + Math.floor(rnd() * 3);
  return Array.from({ length: count }, () => {
    const m = MENU[Math.floor(rnd() * MENU.length)]!;
    const mods =
      rnd() < 0.5
        ? []
        : [{ ...MODIFIERS[Math.floor(rnd() * MODIFIERS.length)]!, quantity: 1 + Math.floor(rnd() * 2) }];
    return { ...m, quantity: 1 + Math.floor(rnd() * 3), modifiers: mods };
  });
}

/** Hand-placed edge cases plus a seeded random spread over three days, two merchants and two channels. */
export function buildOrders(seed = 8): SeedOrder[] {
  const rnd = mulberry32(seed);
  const orders: SeedOrder[] = [
    // 21:30 UTC on the 20th is 00:30 on the 21st in Riyadh.
    order(
      "ord_midnight",
      "mer_a",
      "loc_olaya",
      "jahez",
      "delivered",
      "2026-11-20T21:30:00Z",
      items(rnd),
      rnd,
    ),
    // 20:59 UTC is still the 20th in Riyadh (23:59) but the 21st in Dubai (00:59).
    order(
      "ord_late_riyadh",
      "mer_a",
      "loc_olaya",
      "jahez",
      "delivered",
      "2026-11-20T20:59:00Z",
      items(rnd),
      rnd,
    ),
    order(
      "ord_late_dubai",
      "mer_a",
      "loc_marina",
      "jahez",
      "delivered",
      "2026-11-20T20:59:00Z",
      items(rnd),
      rnd,
    ),
    order(
      "ord_cancelled",
      "mer_a",
      "loc_olaya",
      "jahez",
      "cancelled",
      "2026-11-21T10:00:00Z",
      items(rnd),
      rnd,
    ),
    order(
      "ord_rejected",
      "mer_a",
      "loc_olaya",
      "hungerstation",
      "rejected",
      "2026-11-21T11:00:00Z",
      items(rnd),
      rnd,
    ),
    order(
      "ord_unknown_loc",
      "mer_b",
      UNKNOWN_LOCATION,
      "jahez",
      "delivered",
      "2026-11-21T22:10:00Z",
      items(rnd),
      rnd,
    ),
    order("ord_odd_zone", "mer_b", "loc_odd", "jahez", "ready", "2026-11-21T21:05:00Z", items(rnd), rnd),
  ];
  const places = [
    ["mer_a", "loc_olaya"],
    ["mer_a", "loc_marina"],
    ["mer_b", "loc_odd"],
    ["mer_b", UNKNOWN_LOCATION],
  ] as const;
  const statuses = [
    "delivered",
    "delivered",
    "delivered",
    "picked_up",
    "ready",
    "accepted",
    "placed",
    "rejected",
    "cancelled",
  ];
  const start = Date.parse("2026-11-19T00:00:00Z");
  for (let n = 0; n < 60; n++) {
    const [merchantId, locationId] = places[Math.floor(rnd() * places.length)]!;
    const channel = rnd() < 0.5 ? "jahez" : "hungerstation";
    const status = statuses[Math.floor(rnd() * statuses.length)]!;
    const createdAt = new Date(start + Math.floor(rnd() * 3 * 86_400) * 1000).toISOString();
    orders.push(order(`ord_r${n}`, merchantId, locationId, channel, status, createdAt, items(rnd), rnd));
  }
  return orders;
}
