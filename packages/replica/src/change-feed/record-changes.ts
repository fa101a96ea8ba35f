import type { TransactionSql } from "@loops-sync/db";
import type { ChangeResource, ChangeSource } from "@loops-sync/schema";
import type { ApplyOrderResult } from "../orders/apply-orders-if-newer.ts";

/** One committed change of a mirrored row, as `replica.changes` records it. */
export interface ChangeInput {
  resource: ChangeResource;
  resourceId: string;
  /** Null only for resources of no merchant (the channel catalog). */
  merchantId: string | null;
  operation: "insert" | "update" | "delete";
  version?: number | null;
  previousVersion?: number | null;
  status?: string | null;
  previousStatus?: string | null;
  source: ChangeSource;
  /** The upstream event that led to the change, when one did. */
  eventId?: string | null;
}

/** The feed's NOTIFY channel (one name, in @loops-sync/schema), for the worker, which reads no schema. */
export { CHANGES_CHANNEL } from "@loops-sync/schema";
/** What `replica.changes.resource` names, and how a change came (one list each, in @loops-sync/schema). */
export type { ChangeResource, ChangeSource };

/** A change as the statement that wrote it knows it; the task that ran it adds the cause. */
export type ResourceChange = Omit<ChangeInput, "source" | "eventId">;

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

/** The sources replica.orders.last_change_source may hold. */
const ORDER_SOURCES = new Set<string>([
  "webhook",
  "catchup",
  "backfill",
  "repair",
  "cli",
  "event",
  "confirm",
]);

/**
 * The feed's rows for the orders an apply wrote (`changed` only: a stale, duplicate or identical fetch writes
 * none). `fallback`: the source when the row records none (no single event led to it).
 */
export function orderChanges(results: readonly ApplyOrderResult[], fallback: ChangeSource): ChangeInput[] {
  return results
    .filter((r) => r.changed)
    .map((r) => ({
      resource: "order",
      resourceId: r.id,
      merchantId: r.merchantId,
      operation: r.previousVersion === null ? "insert" : "update",
      version: r.version,
      previousVersion: r.previousVersion,
      status: r.status,
      previousStatus: r.previousStatus,
      source: r.source !== null && ORDER_SOURCES.has(r.source) ? (r.source as ChangeSource) : fallback,
      eventId: r.eventId,
    }));
}
