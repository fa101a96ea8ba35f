import { orderIdOf, type Sql } from "@loops-sync/db";
import type { Event } from "@loops-sync/loops-client";

/** An order an event page speaks of that the replica does not yet hold at the event's version. */
export interface UncoveredOrder {
  orderId: string;
  /** created_at of the oldest event of the page that asks for it. */
  since: Date;
}

const versionOf = (data: Record<string, unknown>): number | undefined =>
  typeof data.version === "number" && Number.isFinite(data.version) ? data.version : undefined;

export interface PageOrders {
  /** The orders the replica does not cover yet. */
  uncovered: UncoveredOrder[];
  /** The version the replica holds of each order the page names (absent: it has no copy). */
  versions: Map<string, number>;
}

/**
 * The orders of a GET /events page whose events the replica does not cover yet: order.* events not
 * originated by us, naming an order the replica lacks or holds at an older version (for an event without
 * a version: holds a copy older than the event). These are what the worker would fetch one by one.
 */
export async function findUncoveredOrders(
  sql: Sql,
  events: readonly Event[],
  applicationId: string | undefined,
): Promise<PageOrders> {
  const asks = new Map<string, { version: number | undefined; createdAt: Date }[]>();
  for (const e of events) {
    if (!e.type.startsWith("order.")) continue;
    if (applicationId && e.origin.application_id === applicationId) continue;
    const orderId = orderIdOf(e.type, e.data);
    if (!orderId) continue;
    const list = asks.get(orderId) ?? [];
    list.push({ version: versionOf(e.data), createdAt: new Date(e.created_at) });
    asks.set(orderId, list);
  }
  if (asks.size === 0) return { uncovered: [], versions: new Map() };
  const rows = await sql<{ id: string; version: string; updated_at: Date }[]>`
    select id, version, updated_at from replica.orders where id = any(${[...asks.keys()]}::text[])`;
  const held = new Map(rows.map((r) => [r.id, { version: Number(r.version), updatedAt: r.updated_at }]));
  const uncovered: UncoveredOrder[] = [];
  for (const [orderId, list] of asks) {
    const replica = held.get(orderId);
    const open = list.filter((ask) =>
      !replica
        ? true
        : ask.version !== undefined
          ? replica.version < ask.version
          : replica.updatedAt < ask.createdAt,
    );
    if (open.length === 0) continue;
    const since = new Date(Math.min(...open.map((a) => a.createdAt.getTime())));
    uncovered.push({ orderId, since });
  }
  return { uncovered, versions: new Map([...held].map(([id, r]) => [id, r.version])) };
}
