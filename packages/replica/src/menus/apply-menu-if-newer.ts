import type { Sql, TransactionSql } from "@loops-sync/db";
import { inTransaction } from "../in-transaction.ts";
import type { MenuInput } from "./menu-input.ts";
import type { MirrorChange } from "./mirror-change.ts";
import { replaceMenuRows } from "./replace-menu-rows.ts";

/**
 * Stores a brand's menu, and replaces all of the brand's menu rows with it, only when its version is newer
 * than the stored one; all in one transaction. The stored row is locked first, so concurrent writers of one
 * brand take turns and the later one sees the earlier one's version: an older or equal fetch writes nothing.
 * Returns the change, or undefined when nothing was written.
 */
export async function applyMenuIfNewer(
  sql: Sql | TransactionSql,
  merchantId: string,
  menu: MenuInput,
): Promise<MirrorChange | undefined> {
  return await inTransaction(sql, async (tx) => {
    const [stored] = await tx<{ version: number }[]>`
      select version from replica.menus where brand_id = ${menu.brand_id} for update`;
    if (stored && stored.version >= menu.version) return undefined;
    const written = await tx`
      insert into replica.menus as r (brand_id, merchant_id, version, updated_at, raw, synced_at)
      select m ->> 'brand_id', ${merchantId}, (m ->> 'version')::bigint, (m ->> 'updated_at')::timestamptz, m,
             now()
      from (select ${JSON.stringify(menu)}::text::jsonb as m) as input
      on conflict (brand_id) do update set
        merchant_id = excluded.merchant_id, version = excluded.version, updated_at = excluded.updated_at,
        raw = excluded.raw, synced_at = now()
      -- Still in the statement: a first insert racing another for a brand never stored before.
      where r.version < excluded.version
      returning r.brand_id`;
    if (written.length === 0) return undefined;
    await replaceMenuRows(tx, merchantId, menu);
    return {
      resource: "menu",
      resourceId: menu.brand_id,
      merchantId,
      operation: stored ? "update" : "insert",
      version: menu.version,
      previousVersion: stored?.version ?? null,
    };
  });
}
