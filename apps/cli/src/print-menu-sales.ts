import type { Sql } from "@loops-sync/db";

/**
 * The demo's view of the rest of the mirror: each brand's menu as rows, and its products by sales, the ones
 * never sold included (reporting.menu_product_sales).
 */
export async function printMenuSales(sql: Sql): Promise<void> {
  const menus = await sql<{ brand: string; version: number; products: number; never_sold: number }[]>`
    select m.brand_id as brand, m.version,
           (select count(*)::int from replica.menu_products p where p.brand_id = m.brand_id) as products,
           (select count(*)::int from reporting.menu_products_never_sold n where n.brand_id = m.brand_id)
             as never_sold
    from replica.menus m order by m.brand_id`;
  if (menus.length === 0) return;
  console.log("\nmirrored menus (replica.menus and its rows):");
  console.table(menus);
  const top = await sql`
    select brand_id as brand, name_en as product, quantity_sold as sold, orders_count as orders
    from reporting.menu_product_sales order by quantity_sold desc, brand_id, product_external_ref limit 5`;
  console.log("best-selling menu products (reporting.menu_product_sales):");
  console.table(top);
}
