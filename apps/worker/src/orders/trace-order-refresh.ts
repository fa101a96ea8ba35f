import type { TransactionSql } from "@loops-sync/db";
import { activeTracing, contextFromTraceParent, linksTo, withSpan } from "@loops-sync/tracing";
import type { Span } from "@opentelemetry/api";
import { type Claimed, type ClaimResult, claimOrders } from "./claim-orders.ts";

/** A claim's span, after the database semantic conventions (the claim deletes the rows it takes). */
const CLAIM_ATTRIBUTES = {
  "db.system.name": "postgresql",
  "db.operation.name": "DELETE",
  "db.collection.name": "sync.order_refresh",
};

/** {@link claimOrders} in a span `DELETE sync.order_refresh` naming the merchant and what was taken. */
export function claimOrdersTraced(
  tx: TransactionSql,
  merchantId: string,
  exclude?: readonly string[],
  limit?: number,
): Promise<ClaimResult> {
  if (!activeTracing()) return claimOrders(tx, merchantId, exclude, limit);
  const attributes = { ...CLAIM_ATTRIBUTES, "loops.merchant.id": merchantId };
  return withSpan("DELETE sync.order_refresh", { kind: "client", attributes }, async (span) => {
    const result = await claimOrders(tx, merchantId, exclude, limit);
    span?.setAttributes({
      "db.response.returned_rows": result.claimed.reduce((rows, c) => rows + c.rows, 0),
      "loops.order_refresh.orders": result.claimed.length,
      "loops.order_refresh.held_elsewhere": result.heldElsewhere,
    });
    return result;
  });
}

/**
 * The traceparents stored with the claimed events (sync.events.trace_parent), read in the batch's
 * transaction; undefined (no statement) while tracing is off.
 */
export function readTraceParents(
  tx: TransactionSql,
  claimed: readonly Claimed[],
): Promise<Map<string, string>> | undefined {
  if (!activeTracing()) return undefined;
  const ids = claimed.flatMap((c) => c.event_ids);
  if (ids.length === 0) return Promise.resolve(new Map());
  const read = tx<{ id: string; trace_parent: string }[]>`
    select id, trace_parent from sync.events where id = any(${ids}::text[]) and trace_parent is not null`.then(
    (rows) => new Map(rows.map((r) => [r.id, r.trace_parent])),
  );
  // A failed read fails the batch's transaction anyway; the spans then start without a parent.
  read.catch(() => {});
  return read;
}

/**
 * Runs one claimed order's fetch and apply in a span `refresh order` that continues the trace of the
 * first of its events the receiver traced (the others, and the batch, are links), so the receiver's span,
 * the fetch and the apply are one trace. Without tracing: `fn()`.
 */
export async function traceOrderRefresh<T>(
  claim: Claimed,
  traceParents: Promise<Map<string, string>> | undefined,
  fn: (span: Span | undefined) => Promise<T>,
): Promise<T> {
  const tracing = activeTracing();
  if (!tracing || !traceParents) return fn(undefined);
  const stored = await traceParents.catch(() => new Map<string, string>());
  const parents = claim.event_ids.map((id) => stored.get(id)).filter((t) => t !== undefined);
  const batch = tracing.api.trace.getActiveSpan()?.spanContext();
  const parent = contextFromTraceParent(parents[0]);
  const links = linksTo(parents.slice(1));
  if (parent && batch) links.push({ context: batch });
  const attributes = {
    "loops.order.id": claim.order_id,
    "loops.event.ids": claim.event_ids,
    "loops.order_refresh.queued_seconds": claim.queued_seconds,
  };
  return withSpan("refresh order", { parent, links, attributes }, fn);
}

/**
 * `fn`, run in the caller's trace context whoever calls it later: a batch's joins are started by the
 * refresher, outside the batch's span, and their claims and orders belong under it. Without tracing: `fn`.
 */
export function inBatchContext<F extends (...args: never[]) => unknown>(fn: F): F {
  const tracing = activeTracing();
  return tracing ? tracing.api.context.bind(tracing.api.context.active(), fn) : fn;
}
