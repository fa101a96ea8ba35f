import { type ChangeInput, recordChanges, type Sql } from "@loops-sync/db";

/** An order's change as the apply path records it: new (→ placed) at version 1, then a status transition. */
export function orderChange(
  orderId: string,
  version: number,
  status: string,
  previousStatus: string | null,
  merchantId = "mer_feed_1",
): ChangeInput {
  return {
    resource: "order",
    resourceId: orderId,
    merchantId,
    operation: version === 1 ? "insert" : "update",
    version,
    previousVersion: version === 1 ? null : version - 1,
    status,
    previousStatus,
    source: "webhook",
    eventId: `evt_${orderId}_${version}`,
  };
}

/** Commits `changes` to replica.changes in one transaction, through the writers' own recordChanges. */
export async function writeChanges(sql: Sql, changes: readonly ChangeInput[]): Promise<void> {
  await sql.begin((tx) => recordChanges(tx, changes));
}

/** `n` new orders `ord_<prefix>_<i>`, one transaction each. */
export async function writeNewOrders(sql: Sql, prefix: string, n: number): Promise<void> {
  for (let i = 0; i < n; i++) await writeChanges(sql, [orderChange(`ord_${prefix}_${i}`, 1, "placed", null)]);
}
