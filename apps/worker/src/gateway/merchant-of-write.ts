import type { TransactionSql } from "@loops-sync/db";

/**
 * The merchant a write concerned: its Service-Merchant-Id, else the answer's `merchant_id`, else the brand's
 * (a job names its brand), else the only merchant synced (a direct integration may leave the header out).
 * Undefined when none of these tells.
 */
export async function merchantOfWrite(
  tx: TransactionSql,
  header: string | undefined,
  resource: unknown,
): Promise<string | undefined> {
  if (header) return header;
  const r = (resource ?? {}) as { merchant_id?: unknown; brand_id?: unknown };
  if (typeof r.merchant_id === "string") return r.merchant_id;
  if (typeof r.brand_id === "string") {
    const [brand] = await tx<{ merchant_id: string }[]>`
      select merchant_id from replica.brands where id = ${r.brand_id}`;
    if (brand) return brand.merchant_id;
  }
  const only = await tx<{ id: string }[]>`select id from sync.merchants where status = 'active' limit 2`;
  return only.length === 1 ? only[0]!.id : undefined;
}
