import {
  type ChangeInput,
  isTransaction,
  recordChanges,
  type Sql,
  type TransactionSql,
} from "@loops-sync/db";
import { isLoopsError } from "@loops-sync/loops-client";
import {
  applyOrdersIfNewer,
  checkOrder,
  inTransaction,
  type OrderProvenance,
  orderChanges,
} from "@loops-sync/replica";

export interface AppliedPage {
  /** Orders of the page this call wrote (new, or newer than the replica's). */
  changed: string[];
  /** Every stored order of the page with the version the replica held before it (null: none). */
  previousVersions: Map<string, number | null>;
  /** Orders the replica cannot store as they are, with why; the rest of the page is applied. */
  invalid: { orderId: string | undefined; reason: string }[];
  /**
   * The feed's rows for the orders the page changed. Given a transaction, the caller records them as its last
   * statement (recordChanges); otherwise the page's own transaction has recorded them.
   */
  changes: ChangeInput[];
}

/**
 * Version-gated upsert of a list page (never older over newer). One malformed order must not stop a page of
 * good ones, so an invalid order is set aside with its reason instead of failing the whole page. `provenance`
 * is recorded on each row the page changes (its `source` also names the feed's rows when no event does).
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
      if (!isLoopsError(error, "bad_response")) throw error;
      invalid.push({ orderId: error.orderId, reason: error.message });
    }
  }
  if (valid.length === 0) return { changed: [], previousVersions: new Map(), invalid, changes: [] };
  const own = !isTransaction(sql);
  const { results, changes } = await inTransaction(sql, async (tx) => {
    const results = await applyOrdersIfNewer(tx, valid, provenance);
    const changes = orderChanges(results, provenance.source ?? "catchup");
    if (own) await recordChanges(tx, changes);
    return { results, changes };
  });
  return {
    changed: results.filter((r) => r.changed).map((r) => r.id),
    previousVersions: new Map(results.map((r) => [r.id, r.previousVersion])),
    invalid,
    changes,
  };
}
