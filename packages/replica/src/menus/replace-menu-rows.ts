import type { TransactionSql } from "@loops-sync/db";
import type { MenuInput } from "./menu-input.ts";

const list = (value: unknown): unknown[] => (Array.isArray(value) ? value : []);

/**
 * Deletes every menu row of the brand and inserts the menu's, inside the caller's transaction (which holds
 * the brand's replica.menus row lock). A row without an external_ref is skipped; a repeated one keeps its
 * first occurrence, so one odd upstream item cannot stop the whole menu.
 */
export async function replaceMenuRows(
  tx: TransactionSql,
  merchantId: string,
  menu: MenuInput,
): Promise<void> {
  const brandId = menu.brand_id;
  const version = menu.version;
  const json = JSON.stringify({
    categories: list(menu.categories),
    modifier_groups: list(menu.modifier_groups),
    products: list(menu.products),
  });
  await tx`
    with categories as (delete from replica.menu_categories where brand_id = ${brandId}),
         products as (delete from replica.menu_products where brand_id = ${brandId}),
         variants as (delete from replica.menu_product_variants where brand_id = ${brandId}),
         groups as (delete from replica.menu_modifier_groups where brand_id = ${brandId}),
         options as (delete from replica.menu_modifier_options where brand_id = ${brandId}),
         product_groups as (delete from replica.menu_product_modifier_groups where brand_id = ${brandId})
    select 1`;
  await tx`
    insert into replica.menu_categories (
      brand_id, external_ref, merchant_id, menu_version, name_en, name_ar, description_en, description_ar,
      sort_order
    )
    select ${brandId}, c ->> 'external_ref', ${merchantId}, ${version}, c #>> '{name,en}', c #>> '{name,ar}',
           c #>> '{description,en}', c #>> '{description,ar}', coalesce((c ->> 'sort_order')::int, 0)
    from jsonb_array_elements(${json}::text::jsonb -> 'categories') as c
    where c ->> 'external_ref' is not null
    on conflict do nothing`;
  await tx`
    insert into replica.menu_products (
      brand_id, external_ref, merchant_id, menu_version, category_external_ref, name_en, name_ar,
      description_en, description_ar, image_url, price_amount, currency, sku, barcode, calories, available,
      sort_order
    )
    select ${brandId}, p ->> 'external_ref', ${merchantId}, ${version}, p ->> 'category_external_ref',
           p #>> '{name,en}', p #>> '{name,ar}', p #>> '{description,en}', p #>> '{description,ar}',
           p ->> 'image_url', (p #>> '{price,amount}')::bigint, p #>> '{price,currency}', p ->> 'sku',
           p ->> 'barcode', (p ->> 'calories')::int, coalesce((p ->> 'available')::boolean, true),
           coalesce((p ->> 'sort_order')::int, 0)
    from jsonb_array_elements(${json}::text::jsonb -> 'products') as p
    where p ->> 'external_ref' is not null
    on conflict do nothing`;
  await tx`
    insert into replica.menu_product_variants (
      brand_id, product_external_ref, external_ref, merchant_id, menu_version, name_en, name_ar, price_amount,
      currency, sku, barcode, calories, available, sort_order
    )
    select ${brandId}, p ->> 'external_ref', v ->> 'external_ref', ${merchantId}, ${version}, v #>> '{name,en}',
           v #>> '{name,ar}', coalesce((v #>> '{price,amount}')::bigint, 0),
           coalesce(v #>> '{price,currency}', 'SAR'), v ->> 'sku', v ->> 'barcode', (v ->> 'calories')::int,
           coalesce((v ->> 'available')::boolean, true), (n - 1)::int
    from jsonb_array_elements(${json}::text::jsonb -> 'products') as p
    cross join lateral jsonb_array_elements(
      case jsonb_typeof(p -> 'variants') when 'array' then p -> 'variants' else '[]' end
    ) with ordinality as x(v, n)
    where p ->> 'external_ref' is not null and v ->> 'external_ref' is not null
    on conflict do nothing`;
  await tx`
    insert into replica.menu_modifier_groups (
      brand_id, external_ref, merchant_id, menu_version, name_en, name_ar, min_selections, max_selections,
      sort_order
    )
    select ${brandId}, g ->> 'external_ref', ${merchantId}, ${version}, g #>> '{name,en}', g #>> '{name,ar}',
           coalesce((g ->> 'min_selections')::int, 0), coalesce((g ->> 'max_selections')::int, 1), (n - 1)::int
    from jsonb_array_elements(${json}::text::jsonb -> 'modifier_groups') with ordinality as x(g, n)
    where g ->> 'external_ref' is not null
    on conflict do nothing`;
  await tx`
    insert into replica.menu_modifier_options (
      brand_id, group_external_ref, external_ref, merchant_id, menu_version, name_en, name_ar, price_amount,
      currency, calories, available, sort_order
    )
    select ${brandId}, g ->> 'external_ref', o ->> 'external_ref', ${merchantId}, ${version},
           o #>> '{name,en}', o #>> '{name,ar}', coalesce((o #>> '{price,amount}')::bigint, 0),
           coalesce(o #>> '{price,currency}', 'SAR'), (o ->> 'calories')::int,
           coalesce((o ->> 'available')::boolean, true), coalesce((o ->> 'sort_order')::int, 0)
    from jsonb_array_elements(${json}::text::jsonb -> 'modifier_groups') as g
    cross join lateral jsonb_array_elements(
      case jsonb_typeof(g -> 'options') when 'array' then g -> 'options' else '[]' end
    ) as o
    where g ->> 'external_ref' is not null and o ->> 'external_ref' is not null
    on conflict do nothing`;
  await tx`
    insert into replica.menu_product_modifier_groups (
      brand_id, product_external_ref, group_external_ref, merchant_id, menu_version, sort_order
    )
    select ${brandId}, p ->> 'external_ref', ref, ${merchantId}, ${version}, (n - 1)::int
    from jsonb_array_elements(${json}::text::jsonb -> 'products') as p
    cross join lateral jsonb_array_elements_text(
      case jsonb_typeof(p -> 'modifier_group_external_refs')
        when 'array' then p -> 'modifier_group_external_refs' else '[]' end
    ) with ordinality as x(ref, n)
    where p ->> 'external_ref' is not null
    on conflict do nothing`;
}
