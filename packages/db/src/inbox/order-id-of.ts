/**
 * The order an event speaks of: `data.order_id` (order.status_changed, the one payload the spec shows), else,
 * for `order.*` events, `data.order.id` or `data.id` (their payloads are "not shown"). The same rule as the
 * generated column sync.events.order_id (migration 0020), for code that reads events before storing them.
 */
export function orderIdOf(type: string, data: unknown): string | undefined {
  if (typeof data !== "object" || data === null) return undefined;
  const d = data as { order_id?: unknown; order?: { id?: unknown } | null; id?: unknown };
  const candidates = type.startsWith("order.") ? [d.order_id, d.order?.id, d.id] : [d.order_id];
  for (const candidate of candidates) {
    if (typeof candidate === "string" && candidate.length > 0) return candidate;
  }
  return undefined;
}
