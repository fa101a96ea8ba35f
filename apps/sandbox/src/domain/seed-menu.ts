import { MENU } from "./order-factory.ts";
import type { Menu } from "./resources.ts";

const ref = (sku: string): string => sku.toLowerCase();

/**
 * A brand's first menu (version 1): the products the sandbox's orders are made of, each with its sku and its
 * modifiers as one optional group, plus one product no order ever contains, so "never sold" has an answer.
 */
export function seedMenu(brandId: string, nowIso: string): Menu {
  const sar = (amount: number) => ({ amount, currency: "SAR" });
  const groups = MENU.filter((entry) => entry.modifiers?.length).map((entry) => ({
    external_ref: `${ref(entry.sku)}-extras`,
    name: { en: `${entry.en} extras`, ar: `إضافات ${entry.ar}` },
    min_selections: 0,
    max_selections: entry.modifiers!.length,
    options: entry.modifiers!.map((m, i) => ({
      external_ref: `${ref(entry.sku)}-extra-${i + 1}`,
      name: { en: m.en, ar: m.ar },
      price: sar(m.price),
      available: true,
      sort_order: i,
    })),
  }));
  const products = MENU.map((entry, i) => ({
    external_ref: ref(entry.sku),
    category_external_ref: "mains",
    name: { en: entry.en, ar: entry.ar },
    price: sar(entry.price),
    sku: entry.sku,
    calories: 300 + 25 * i,
    modifier_group_external_refs: entry.modifiers?.length ? [`${ref(entry.sku)}-extras`] : [],
    available: true,
    sort_order: i,
  }));
  products.push({
    external_ref: "maamoul",
    category_external_ref: "sweets",
    name: { en: "Date Maamoul", ar: "معمول تمر" },
    price: sar(800),
    sku: "MML-DATE",
    calories: 180,
    modifier_group_external_refs: [],
    available: true,
    sort_order: MENU.length,
  });
  return {
    brand_id: brandId,
    version: 1,
    updated_at: nowIso,
    categories: [
      { external_ref: "mains", name: { en: "Menu", ar: "القائمة" }, sort_order: 0 },
      { external_ref: "sweets", name: { en: "Sweets", ar: "حلويات" }, sort_order: 1 },
    ],
    modifier_groups: groups,
    products,
  };
}
