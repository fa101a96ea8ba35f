import type { ProblemItem } from "./resources.ts";

type Json = Record<string, unknown>;

const isObject = (v: unknown): v is Json => typeof v === "object" && v !== null && !Array.isArray(v);
const REF = /^[A-Za-z0-9\-_.:;]{1,64}$/;

/**
 * Every problem of a menu import, all at once (the import is all or nothing): references, names, prices in
 * SAR, price-or-variants, modifier group bounds, duplicate external_refs.
 */
export function checkMenu(menu: Json): ProblemItem[] {
  const problems: ProblemItem[] = [];
  const add = (ref: unknown, field: string, code: string, message: string): void => {
    problems.push({ external_ref: typeof ref === "string" ? ref : null, field, code, message });
  };
  const seen = new Set<string>();
  const checkRef = (item: Json, path: string): void => {
    if (typeof item.external_ref !== "string" || !REF.test(item.external_ref)) {
      add(
        null,
        `${path}.external_ref`,
        "invalid_external_ref",
        "external_ref must be 1-64 letters, digits or - _ . : ;",
      );
    } else if (seen.has(item.external_ref)) {
      add(
        item.external_ref,
        `${path}.external_ref`,
        "duplicate_external_ref",
        "external_ref is used twice in this menu",
      );
    } else seen.add(item.external_ref);
  };
  const checkName = (item: Json, path: string): void => {
    const name = item.name;
    const ok = (s: unknown) => typeof s === "string" && s.length >= 1 && s.length <= 120;
    if (!isObject(name) || !ok(name.en) || !ok(name.ar))
      add(item.external_ref, `${path}.name`, "invalid_name", "name needs en and ar, 1-120 characters each");
  };
  const checkPrice = (item: Json, field: string, path: string): void => {
    const price = item[field];
    if (!isObject(price) || !Number.isInteger(price.amount) || (price.amount as number) < 0) {
      add(
        item.external_ref,
        `${path}.${field}`,
        "invalid_price",
        "price needs a non-negative integer amount in halalas",
      );
    } else if (price.currency !== "SAR")
      add(
        item.external_ref,
        `${path}.${field}.currency`,
        "invalid_currency",
        "only SAR is accepted in menus",
      );
  };
  const list = (key: string): Json[] => {
    const value = menu[key];
    return Array.isArray(value) ? value.filter(isObject) : [];
  };

  const categories = new Set<string>();
  list("categories").forEach((cat, i) => {
    checkRef(cat, `categories[${i}]`);
    checkName(cat, `categories[${i}]`);
    if (typeof cat.external_ref === "string") categories.add(cat.external_ref);
  });
  const groups = new Set<string>();
  list("modifier_groups").forEach((g, i) => {
    const path = `modifier_groups[${i}]`;
    checkRef(g, path);
    checkName(g, path);
    if (typeof g.external_ref === "string") groups.add(g.external_ref);
    const min = g.min_selections;
    const max = g.max_selections;
    if (!Number.isInteger(min) || (min as number) < 0)
      add(g.external_ref, `${path}.min_selections`, "invalid_selections", "min_selections must be 0 or more");
    if (
      !Number.isInteger(max) ||
      (max as number) < 1 ||
      (Number.isInteger(min) && (max as number) < (min as number))
    ) {
      add(
        g.external_ref,
        `${path}.max_selections`,
        "invalid_selections",
        "max_selections must be at least 1 and at least min_selections",
      );
    }
    const options = Array.isArray(g.options) ? g.options.filter(isObject) : [];
    if (options.length === 0)
      add(g.external_ref, `${path}.options`, "missing_options", "a modifier group needs at least one option");
    options.forEach((o, j) => {
      checkRef(o, `${path}.options[${j}]`);
      checkName(o, `${path}.options[${j}]`);
      checkPrice(o, "price", `${path}.options[${j}]`);
    });
  });
  list("products").forEach((p, i) => {
    const path = `products[${i}]`;
    checkRef(p, path);
    checkName(p, path);
    if (typeof p.category_external_ref !== "string" || !categories.has(p.category_external_ref)) {
      add(
        p.external_ref,
        `${path}.category_external_ref`,
        "unknown_category",
        "category_external_ref names no category of this menu",
      );
    }
    const variants = Array.isArray(p.variants) ? p.variants.filter(isObject) : [];
    if ((p.price !== undefined) === variants.length > 0) {
      add(p.external_ref, path, "price_or_variants", "give either price or at least one variant, not both");
    }
    if (p.price !== undefined) checkPrice(p, "price", path);
    variants.forEach((v, j) => {
      checkRef(v, `${path}.variants[${j}]`);
      checkName(v, `${path}.variants[${j}]`);
      checkPrice(v, "price", `${path}.variants[${j}]`);
    });
    for (const ref of Array.isArray(p.modifier_group_external_refs) ? p.modifier_group_external_refs : []) {
      if (typeof ref !== "string" || !groups.has(ref)) {
        add(
          p.external_ref,
          `${path}.modifier_group_external_refs`,
          "unknown_modifier_group",
          `modifier group ${String(ref)} is not in this menu`,
        );
      }
    }
    if (
      p.image_url !== undefined &&
      p.image_url !== null &&
      (typeof p.image_url !== "string" || !/^https:\/\/.+\.(jpe?g|png)(\?.*)?$/i.test(p.image_url))
    ) {
      add(
        p.external_ref,
        `${path}.image_url`,
        "invalid_image",
        "image_url must be a public HTTPS JPG or PNG",
      );
    }
  });
  return problems;
}
