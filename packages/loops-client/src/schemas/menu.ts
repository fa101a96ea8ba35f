import { z } from "zod";
import { LocalizedTextSchema, MoneySchema } from "./common.ts";

export const MenuCategorySchema = z.looseObject({
  external_ref: z.string(),
  name: LocalizedTextSchema,
  description: LocalizedTextSchema.nullish(),
  sort_order: z.number().int().nullish(),
});

export const ModifierOptionSchema = z.looseObject({
  external_ref: z.string(),
  name: LocalizedTextSchema,
  price: MoneySchema,
  calories: z.number().int().nullish(),
  available: z.boolean().nullish(),
  sort_order: z.number().int().nullish(),
});

export const ModifierGroupSchema = z.looseObject({
  external_ref: z.string(),
  name: LocalizedTextSchema,
  min_selections: z.number().int(),
  max_selections: z.number().int(),
  options: z.array(ModifierOptionSchema),
});

export const VariantSchema = z.looseObject({
  external_ref: z.string(),
  name: LocalizedTextSchema,
  price: MoneySchema,
  sku: z.string().nullish(),
  barcode: z.string().nullish(),
  calories: z.number().int().nullish(),
  available: z.boolean().nullish(),
});

export const ProductSchema = z.looseObject({
  external_ref: z.string(),
  category_external_ref: z.string(),
  name: LocalizedTextSchema,
  description: LocalizedTextSchema.nullish(),
  image_url: z.string().nullish(),
  price: MoneySchema.nullish(),
  variants: z.array(VariantSchema).nullish(),
  sku: z.string().nullish(),
  barcode: z.string().nullish(),
  calories: z.number().int().nullish(),
  modifier_group_external_refs: z.array(z.string()).nullish(),
  available: z.boolean().nullish(),
  sort_order: z.number().int().nullish(),
});

/** A brand's menu as last imported. */
export const MenuSchema = z.looseObject({
  brand_id: z.string(),
  version: z.number().int(),
  updated_at: z.string(),
  categories: z.array(MenuCategorySchema),
  modifier_groups: z.array(ModifierGroupSchema).nullish(),
  products: z.array(ProductSchema),
});
export type Menu = z.output<typeof MenuSchema>;
export type MenuCategory = z.output<typeof MenuCategorySchema>;
export type ModifierGroup = z.output<typeof ModifierGroupSchema>;
export type ModifierOption = z.output<typeof ModifierOptionSchema>;
export type Product = z.output<typeof ProductSchema>;
export type Variant = z.output<typeof VariantSchema>;
