import type { TransactionSql } from "../connection/connect.ts";
import type { ChangeInput, ChangeSource, ResourceChange } from "./change-feed.ts";

/**
 * The feed's rows for changes a refresh wrote: caused by the newest event its transaction settled, or, when
 * it settled none, by `fallback` (the periodic refresh: "reconcile").
 */
export function causedBy(
  changes: readonly ResourceChange[],
  cause: { id: string; source: ChangeSource } | null,
  fallback: ChangeSource = "reconcile",
): ChangeInput[] {
  return changes.map((c) => ({ ...c, source: cause?.source ?? fallback, eventId: cause?.id ?? null }));
}

/**
 * Appends the transaction's changes to the feed, in the given order. It must be the LAST statement before
 * COMMIT: the insert takes the feed's lock (migration 0011), which serialises every writer's position and
 * commit until this transaction ends, so any row lock or wait after it would hold up every other writer.
 * Returns the statement, already sent (`.execute()`), so a pipelined transaction can put it in its tail;
 * nothing is sent for no changes.
 */
export function recordChanges(tx: TransactionSql, changes: readonly ChangeInput[]): Promise<unknown> {
  if (changes.length === 0) return Promise.resolve();
  const json = JSON.stringify(
    changes.map((c) => ({
      r: c.resource,
      i: c.resourceId,
      m: c.merchantId,
      o: c.operation,
      v: c.version ?? null,
      pv: c.previousVersion ?? null,
      s: c.status ?? null,
      ps: c.previousStatus ?? null,
      src: c.source,
      e: c.eventId ?? null,
    })),
  );
  return tx`
    insert into replica.changes (
      resource, resource_id, merchant_id, operation, version, previous_version, status, previous_status, source,
      event_id
    )
    select c ->> 'r', c ->> 'i', c ->> 'm', c ->> 'o', (c ->> 'v')::bigint, (c ->> 'pv')::bigint, c ->> 's',
           c ->> 'ps', c ->> 'src', c ->> 'e'
    from jsonb_array_elements(${json}::text::jsonb) with ordinality as t(c, n)
    order by n`.execute();
}
