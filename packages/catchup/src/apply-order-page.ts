import type { Sql, TransactionSql } from "@loops-sync/db";
import { applyOrdersIfNewer, checkOrder, InvalidOrderError, type OrderProvenance } from "@loops-sync/replica";

export interface AppliedPage {
  /** Orders of the page this call wrote (new, or newer than the replica's). */
  changed: string[];
  /** Every stored order of the page with the version the replica held before it (null: none). */
  previousVersions: Map<string, number | null>;
  /** Orders the replica cannot store as they are, with why; the rest of the page is applied. */
  invalid: { orderId: string | undefined; reason: string }[];
}

/**
 * Version-gated upsert of a list page (never older over newer). One malformed order must not stop a page of
 * good ones, so an invalid order is set aside with its reason instead of failing the whole page. `provenance`
 * is recorded on each row the page changes.
 */
export async function applyOrderPage(
  sql: Sql | TransactionSql,
  orders: readonly unknown[],
  provenance: OrderProvenance,
): Promise<AppliedPage> {
  const valid: unknown[] = [];
  const invalid: AppliedPage["invalid"] = [];
  for (const order of orders) {
    try {
      checkOrder(order);
      valid.push(order);
    } catch (error) {
      if (!(error instanceof InvalidOrderError)) throw error;
      invalid.push({ orderId: error.orderId, reason: error.message });
    }
  }
  const results = valid.length > 0 ? await applyOrdersIfNewer(sql, valid, provenance) : [];
  return {
    changed: results.filter((r) => r.changed).map((r) => r.id),
    previousVersions: new Map(results.map((r) => [r.id, r.previousVersion])),
    invalid,
  };
}
