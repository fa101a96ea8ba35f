import { recordChanges, type Sql } from "@loops-sync/db";
import type { Order } from "@loops-sync/loops-client";
import { applyOrderPage } from "./apply-order-page.ts";
import type { OrderDifference } from "./compare-order.ts";

/**
 * Makes the replica match upstream for one difference, in one transaction. Missing and older orders go
 * through the version gate. A status mismatch at the same version cannot (the gate keeps equal versions),
 * so that row is deleted and the upstream copy inserted; the delete is limited to versions not above the
 * upstream one, so a newer copy a worker wrote meanwhile survives. An extra order (upstream answered 404)
 * is deleted with its children. Returns true when the replica changed.
 */
export async function repairOrder(
  sql: Sql,
  difference: OrderDifference,
  upstream: Order | undefined,
): Promise<boolean> {
  const { orderId, kind } = difference;
  return await sql.begin(async (tx) => {
    if (kind === "extra") {
      const deleted = await tx<{ merchant_id: string; version: number; status: string }[]>`
        delete from replica.orders where id = ${orderId} returning merchant_id, version, status`;
      await recordChanges(
        tx,
        deleted.map((d) => ({
          resource: "order",
          resourceId: orderId,
          merchantId: d.merchant_id,
          operation: "delete",
          previousVersion: d.version,
          previousStatus: d.status,
          source: "repair",
        })),
      );
      return deleted.length > 0;
    }
    if (!upstream) return false;
    const replaced =
      kind === "status_mismatch"
        ? await tx<{ version: number; status: string }[]>`
            delete from replica.orders where id = ${orderId} and version <= ${upstream.version}
            returning version, status`
        : [];
    const applied = await applyOrderPage(tx, [upstream], { source: "repair" });
    // A replaced row is one update in the feed, from what the replica held to what upstream has.
    const before = replaced[0];
    await recordChanges(
      tx,
      applied.changes.map((c) =>
        before
          ? { ...c, operation: "update", previousVersion: before.version, previousStatus: before.status }
          : c,
      ),
    );
    return applied.changed.length > 0;
  });
}
