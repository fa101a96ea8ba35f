import type { Sql, TransactionSql } from "@loops-sync/db";

/**
 * A location's `raw` when two shapes of the same revision meet. Loops returns a location in two shapes: the
 * read shape (GET /locations: `status`) and the write shape (POST and PATCH: `opening_hours`, `phone`,
 * `email`, `external_ref`, a fuller `address`). A write through the gateway is mirrored from the write shape;
 * a listing of the same revision (same `updated_at`) must not drop what only the write shape carries, nor the
 * write drop the stored `status`. So the keys of both are kept, `address` merged key by key, the incoming
 * shape winning where both have a key.
 */
function mergedRaw(stored: string, incoming: string): string {
  return `(${stored} || ${incoming} || case
      when jsonb_typeof(${stored} -> 'address') = 'object' and jsonb_typeof(${incoming} -> 'address') = 'object'
      then jsonb_build_object('address', (${stored} -> 'address') || (${incoming} -> 'address'))
      else '{}'::jsonb end)`;
}

/**
 * The `raw` an upsert of replica.locations writes over the stored row `r` from `excluded`: the merge of both
 * for the same revision (`updated_at` equal), else the incoming read alone (what only an older write showed
 * may be stale now). Constant text, so the statements holding it stay prepared once.
 */
export function locationRawOnConflict(sql: Sql | TransactionSql) {
  return sql.unsafe(
    `case when r.updated_at = excluded.updated_at then ${mergedRaw("r.raw", "excluded.raw")} else excluded.raw end`,
  );
}

/** The `raw` a write through the gateway leaves: the stored row's keys kept, the write shape's over them. */
export function locationRawOfWrite(sql: Sql | TransactionSql) {
  return sql.unsafe(mergedRaw("r.raw", "excluded.raw"));
}
