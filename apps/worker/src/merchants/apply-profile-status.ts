import type { ResourceChange, TransactionSql } from "@loops-sync/db";

/**
 * A business profile a write through the gateway returned (PUT details, submit): the mirror keeps no profile,
 * but the merchant's `business_profile_status` is the profile's status, so a submit shows `in_review` at once.
 * A merchant not mirrored yet, or already showing that status, writes nothing.
 */
export async function applyProfileStatus(
  tx: TransactionSql,
  merchantId: string,
  status: string,
): Promise<ResourceChange[]> {
  const rows = await tx<{ id: string; status: string }[]>`
    update replica.merchants
    set business_profile_status = ${status},
        raw = jsonb_set(raw, '{business_profile_status}', to_jsonb(${status}::text)), synced_at = now()
    where id = ${merchantId} and business_profile_status is distinct from ${status}
    returning id, status`;
  return rows.map((r) => ({
    resource: "merchant",
    resourceId: r.id,
    merchantId: r.id,
    operation: "update",
    status: r.status,
    previousStatus: r.status,
  }));
}
