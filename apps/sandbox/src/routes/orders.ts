import { Hono } from "hono";
import { z } from "zod";
import { ORDER_STATUSES, type Order } from "../domain/resources.ts";
import { forMerchant } from "../http/auth.ts";
import { parseJsonBody, parseWith } from "../http/body.ts";
import type { ApiEnv } from "../http/context.ts";
import { pageAfter, parseLimit } from "../http/pagination.ts";
import { notFound } from "../problem.ts";
import type { SandboxServices } from "../services.ts";

const isoDate = z.iso.datetime({ offset: true, error: "must be an ISO 8601 date-time" });

const listQuery = z.object({
  location_id: z.string().min(1).optional(),
  channel: z.string().min(1).optional(),
  status: z.enum(ORDER_STATUSES).optional(),
  updated_since: isoDate.optional(),
  created_from: isoDate.optional(),
  created_to: isoDate.optional(),
});

const createBody = z.object({
  location_id: z.string().min(1),
  channel: z.string().min(1).optional(),
  type: z.enum(["delivery", "pickup", "dine_in"]).optional(),
});

/** Newest update first; ties broken by id, descending, so the order is total and cursors are stable. */
const newestFirst = (a: Order, b: Order): number =>
  a.updated_at < b.updated_at ? 1 : a.updated_at > b.updated_at ? -1 : a.id < b.id ? 1 : a.id > b.id ? -1 : 0;

/** GET /orders, GET /orders/{order_id}, POST /sandbox/orders. */
export function orderRoutes({ store, world }: SandboxServices): Hono<ApiEnv> {
  const app = new Hono<ApiEnv>();
  const read = forMerchant({ store, scope: "orders:read" });
  // Sorting every order on every page is the cost that grows; recompute only after a change.
  const sorted = new Map<string, { revision: number; rows: Order[] }>();
  const sortedOrders = (merchantId: string): Order[] => {
    const hit = sorted.get(merchantId);
    if (hit && hit.revision === store.orderRevision) return hit.rows;
    const rows = store.ordersOf(merchantId).sort(newestFirst);
    sorted.set(merchantId, { revision: store.orderRevision, rows });
    return rows;
  };

  app.get("/orders", read, (c) => {
    const limit = parseLimit(c.req.query("limit"));
    const q = parseWith(listQuery, {
      location_id: c.req.query("location_id"),
      channel: c.req.query("channel"),
      status: c.req.query("status"),
      updated_since: c.req.query("updated_since"),
      created_from: c.req.query("created_from"),
      created_to: c.req.query("created_to"),
    });
    const ms = (iso: string | undefined): number | undefined =>
      iso === undefined ? undefined : Date.parse(iso);
    const updatedSince = ms(q.updated_since);
    const createdFrom = ms(q.created_from);
    const createdTo = ms(q.created_to);
    const rows = sortedOrders(c.get("merchantId")).filter(
      (o) =>
        (!q.location_id || o.location_id === q.location_id) &&
        (!q.channel || o.channel === q.channel) &&
        (!q.status || o.status === q.status) &&
        (updatedSince === undefined || Date.parse(o.updated_at) >= updatedSince) &&
        (createdFrom === undefined || Date.parse(o.created_at) >= createdFrom) &&
        (createdTo === undefined || Date.parse(o.created_at) < createdTo),
    );
    const page = pageAfter(rows, {
      list: "orders",
      cursor: c.req.query("cursor"),
      limit,
      keyOf: (o) => [o.updated_at, o.id],
      isAfter: (o, [u, id]) => o.updated_at < String(u) || (o.updated_at === String(u) && o.id < String(id)),
    });
    return c.json(page);
  });

  app.get("/orders/:order_id", read, (c) => {
    const order = store.orders.get(c.req.param("order_id"));
    if (!order || order.merchant_id !== c.get("merchantId"))
      throw notFound(`order ${c.req.param("order_id")}`);
    return c.json(order);
  });

  app.post("/sandbox/orders", read, async (c) => {
    const body = await parseJsonBody(c, createBody);
    const order = world.createOrder(
      {
        merchantId: c.get("merchantId"),
        locationId: body.location_id,
        ...(body.channel ? { channel: body.channel } : {}),
        ...(body.type ? { type: body.type } : {}),
      },
      // A simulated channel's order (the spec: "so real order.* events are produced"), not the caller's own
      // write: a receiver that ignores its self-originated events still mirrors it.
      { type: "channel", application_id: null },
    );
    return c.json(order, 201);
  });

  return app;
}
