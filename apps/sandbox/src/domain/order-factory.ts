import type { Random } from "../random.ts";
import type {
  ChannelConnection,
  Location,
  Money,
  Order,
  OrderItem,
  OrderModifier,
  OrderType,
} from "./resources.ts";

/** Saudi VAT, applied to what the customer pays before tax. */
export const VAT_RATE = 0.15;

const sar = (amount: number): Money => ({ amount, currency: "SAR" });

export interface MenuEntry {
  en: string;
  ar: string;
  sku: string;
  price: number;
  modifiers?: { en: string; ar: string; price: number }[];
}

/** What the sandbox's orders are made of; the seeded menus list the same products (domain/seed-menu.ts). */
export const MENU: readonly MenuEntry[] = [
  {
    en: "Chicken Shawarma",
    ar: "شاورما دجاج",
    sku: "SHW-CHK",
    price: 1500,
    modifiers: [
      { en: "Extra garlic sauce", ar: "ثومية إضافية", price: 200 },
      { en: "Cheese", ar: "جبنة", price: 300 },
    ],
  },
  {
    en: "Beef Kabsa",
    ar: "كبسة لحم",
    sku: "KBS-BEEF",
    price: 4500,
    modifiers: [{ en: "Extra rice", ar: "رز إضافي", price: 800 }],
  },
  { en: "Mandi Chicken", ar: "مندي دجاج", sku: "MND-CHK", price: 3800 },
  {
    en: "Falafel Wrap",
    ar: "لفافة فلافل",
    sku: "FLF-WRP",
    price: 900,
    modifiers: [{ en: "Spicy", ar: "حار", price: 0 }],
  },
  { en: "Hummus", ar: "حمص", sku: "HMS", price: 1100 },
  {
    en: "Arabic Coffee",
    ar: "قهوة عربية",
    sku: "QHW-AR",
    price: 1200,
    modifiers: [{ en: "Dates", ar: "تمر", price: 500 }],
  },
  {
    en: "Karak Tea",
    ar: "شاي كرك",
    sku: "KRK",
    price: 700,
    modifiers: [{ en: "Large", ar: "كبير", price: 300 }],
  },
  { en: "Kunafa", ar: "كنافة", sku: "KNF", price: 2200 },
  { en: "Fresh Orange Juice", ar: "عصير برتقال طازج", sku: "JCE-ORG", price: 1300 },
];

const lineAmount = (item: OrderItem): number =>
  item.quantity *
  (item.unit_price.amount + item.modifiers.reduce((s, m) => s + m.quantity * m.unit_price.amount, 0));

/**
 * Totals that add up: subtotal = Σ quantity × (unit price + Σ modifier quantity × modifier price);
 * tax = 15% of (subtotal − discount + delivery fee), rounded to the halala; total = that base + tax.
 */
export function computeTotals(items: OrderItem[], discount: number, deliveryFee: number): Order["totals"] {
  const subtotal = items.reduce((s, i) => s + lineAmount(i), 0);
  const base = Math.max(0, subtotal - discount + deliveryFee);
  const tax = Math.round(base * VAT_RATE);
  return {
    subtotal: sar(subtotal),
    discount: sar(discount),
    delivery_fee: sar(deliveryFee),
    tax: sar(tax),
    total: sar(base + tax),
  };
}

export interface BuildOrderOptions {
  id: string;
  location: Location;
  channelConnection: ChannelConnection;
  channelRef: string;
  random: Random;
  nowIso: string;
  type?: OrderType;
}

/** A realistic new order: 1–4 lines of bilingual menu items, some with modifiers, consistent totals. */
export function buildOrder({
  id,
  location,
  channelConnection,
  channelRef,
  random,
  nowIso,
  type,
}: BuildOrderOptions): Order {
  const orderType: OrderType =
    type ?? random.pick(["delivery", "delivery", "delivery", "pickup", "dine_in"] as const);
  const items: OrderItem[] = [];
  const lines = random.int(1, 4);
  for (let i = 0; i < lines; i++) {
    const entry = random.pick(MENU);
    const modifiers: OrderModifier[] = (entry.modifiers ?? [])
      .filter(() => random.chance(0.5))
      .map((m) => ({ name: { en: m.en, ar: m.ar }, quantity: 1, unit_price: sar(m.price) }));
    items.push({
      name: { en: entry.en, ar: entry.ar },
      sku: entry.sku,
      quantity: random.int(1, 3),
      unit_price: sar(entry.price),
      modifiers,
      notes: random.chance(0.1) ? "بدون بصل — no onions" : null,
    });
  }
  const subtotal = items.reduce((s, i) => s + lineAmount(i), 0);
  const discount = random.chance(0.2) ? Math.round(subtotal * 0.1) : 0;
  const deliveryFee = orderType === "delivery" ? random.pick([0, 500, 900, 1200]) : 0;
  const method = random.pick(["online", "online", "cash", "card_on_delivery"] as const);
  return {
    id,
    version: 1,
    merchant_id: location.merchant_id,
    location_id: location.id,
    channel: channelConnection.channel,
    channel_connection_id: channelConnection.id,
    channel_ref: channelRef,
    type: orderType,
    status: "placed",
    status_history: [{ status: "placed", at: nowIso }],
    // Some customers order ahead: ready in 30 min to 2 h.
    scheduled_for: random.chance(0.1)
      ? new Date(Date.parse(nowIso) + random.int(30, 120) * 60_000).toISOString()
      : null,
    items,
    totals: computeTotals(items, discount, deliveryFee),
    payment: { method, paid: method === "online" },
    notes: random.chance(0.15) ? "الرجاء الاتصال عند الوصول — please call on arrival" : null,
    created_at: nowIso,
    updated_at: nowIso,
    extensions: { [channelConnection.channel]: { customer_rating_eligible: true } },
  };
}
