import { z } from "zod";
import { LoopsError } from "../errors.ts";
import { externalRef, httpsUrl, id, localizedName, localizedText, menuMoney } from "./rules.ts";

const count = (what: string) =>
  z.number({ error: `expected an integer ${what}` }).int(`expected an integer ${what}`);
const optionalInt = z.number().int("expected an integer").nullish();

const Category = z.looseObject({
  external_ref: externalRef,
  name: localizedName,
  description: localizedText.optional(),
  sort_order: optionalInt,
});

const Option = z.looseObject({
  external_ref: externalRef,
  name: localizedName,
  price: menuMoney,
  calories: optionalInt,
  available: z.boolean().optional(),
  sort_order: optionalInt,
});

const ModifierGroup = z
  .looseObject({
    external_ref: externalRef,
    name: localizedName,
    min_selections: count("of 0 or more").min(0, "expected 0 or more (0 = optional)"),
    max_selections: count("of 1 or more").min(1, "expected at least 1"),
    options: z.array(Option).min(1, "expected at least one option"),
  })
  .refine((g) => g.max_selections >= g.min_selections, {
    path: ["max_selections"],
    message: "expected max_selections >= min_selections",
  });

const Variant = z.looseObject({
  external_ref: externalRef,
  name: localizedName,
  price: menuMoney,
  sku: z.string().nullish(),
  barcode: z.string().nullish(),
  calories: optionalInt,
  available: z.boolean().optional(),
});

const Product = z
  .looseObject({
    external_ref: externalRef,
    category_external_ref: externalRef,
    name: localizedName,
    description: localizedText.optional(),
    image_url: httpsUrl.nullish(),
    price: menuMoney.optional(),
    variants: z.array(Variant).optional(),
    sku: z.string().nullish(),
    barcode: z.string().nullish(),
    calories: optionalInt,
    modifier_group_external_refs: z.array(externalRef).optional(),
    available: z.boolean().optional(),
    sort_order: optionalInt,
  })
  .superRefine((p, ctx) => {
    const hasVariants = p.variants !== undefined && p.variants.length > 0;
    if (p.price !== undefined && p.variants !== undefined) {
      ctx.addIssue({
        code: "custom",
        path: ["variants"],
        message: "give either price or variants, not both",
      });
    } else if (p.price === undefined && !hasVariants) {
      ctx.addIssue({ code: "custom", path: ["price"], message: "give a price or at least one variant" });
    }
  });

/** Body of PUT /brands/{id}/menu; also checks that references point inside the menu. */
export const MenuImportInput = z
  .looseObject({
    categories: z.array(Category, { error: "expected an array of categories" }),
    modifier_groups: z.array(ModifierGroup).optional(),
    products: z.array(Product, { error: "expected an array of products" }),
  })
  .superRefine((menu, ctx) => {
    const categories = new Set(menu.categories.map((c) => c.external_ref));
    const groups = new Set((menu.modifier_groups ?? []).map((g) => g.external_ref));
    for (const [i, p] of menu.products.entries()) {
      if (!categories.has(p.category_external_ref)) {
        ctx.addIssue({
          code: "custom",
          path: ["products", i, "category_external_ref"],
          message: `no category with external_ref "${p.category_external_ref}" in this menu`,
        });
      }
      for (const [j, ref] of (p.modifier_group_external_refs ?? []).entries()) {
        if (!groups.has(ref)) {
          ctx.addIssue({
            code: "custom",
            path: ["products", i, "modifier_group_external_refs", j],
            message: `no modifier group with external_ref "${ref}" in this menu`,
          });
        }
      }
    }
  });
export type MenuImportParams = z.input<typeof MenuImportInput>;

/** The import body limit: "5 MB of JSON", read as 5,000,000 bytes (the safe reading; 5 MiB is more). */
export const MAX_MENU_BYTES = 5_000_000;

/** Serialises once and refuses a body over the limit, so a huge menu fails here and not after upload. */
export function checkMenuSize(menu: unknown): void {
  const bytes = Buffer.byteLength(JSON.stringify(menu));
  if (bytes > MAX_MENU_BYTES) {
    throw LoopsError.invalidArgument(
      "",
      `the menu is ${bytes} bytes of JSON; the limit is 5 MB (${MAX_MENU_BYTES})`,
    );
  }
}

export const MenuPublishInput = z.looseObject({
  location_ids: z.array(id).min(1, "expected at least one location ID (omit to publish to all)").optional(),
});
export type MenuPublishParams = z.input<typeof MenuPublishInput>;
