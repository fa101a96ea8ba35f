/** A menu import body: two categories, one product by price, one by variants, one modifier group. */
export function importedMenu(suffix: string) {
  const sar = (amount: number) => ({ amount, currency: "SAR" as const });
  return {
    categories: [
      { external_ref: `grill-${suffix}`, name: { en: "Grill", ar: "مشويات" }, sort_order: 0 },
      { external_ref: `drinks-${suffix}`, name: { en: "Drinks", ar: "مشروبات" }, sort_order: 1 },
    ],
    modifier_groups: [
      {
        external_ref: `sauce-${suffix}`,
        name: { en: "Sauce", ar: "صوص" },
        min_selections: 0,
        max_selections: 2,
        options: [
          {
            external_ref: `garlic-${suffix}`,
            name: { en: "Garlic", ar: "ثوم" },
            price: sar(200),
            sort_order: 1,
          },
          { external_ref: `chili-${suffix}`, name: { en: "Chili", ar: "حار" }, price: sar(0), sort_order: 0 },
        ],
      },
    ],
    products: [
      {
        external_ref: `kebab-${suffix}`,
        category_external_ref: `grill-${suffix}`,
        name: { en: `Kebab ${suffix}`, ar: "كباب" },
        price: sar(3500),
        sku: `KBB-${suffix}`,
        modifier_group_external_refs: [`sauce-${suffix}`],
        sort_order: 2,
      },
      {
        external_ref: `laban-${suffix}`,
        category_external_ref: `drinks-${suffix}`,
        name: { en: "Laban", ar: "لبن" },
        variants: [
          {
            external_ref: `laban-s-${suffix}`,
            name: { en: "Small", ar: "صغير" },
            price: sar(400),
            sku: `LBN-S-${suffix}`,
          },
          {
            external_ref: `laban-l-${suffix}`,
            name: { en: "Large", ar: "كبير" },
            price: sar(700),
            available: false,
          },
        ],
        available: false,
      },
    ],
  };
}
