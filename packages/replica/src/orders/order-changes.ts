import type { ChangeInput, ChangeSource } from "@loops-sync/db";
import type { ApplyOrderResult } from "./apply-orders-if-newer.ts";

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
