import { Hono } from "hono";
import type { SandboxEvent } from "../domain/resources.ts";
import { forMerchant } from "../http/auth.ts";
import type { ApiEnv } from "../http/context.ts";
import { parseLimit } from "../http/pagination.ts";
import { invalidRequest, notFound, ProblemError } from "../problem.ts";
import type { SandboxServices } from "../services.ts";

/** The event as this caller sees it: filed under the caller's own connection to the merchant. */
const asSeenBy = (event: SandboxEvent, connectionId: string): SandboxEvent =>
  event.connection_id === connectionId ? event : { ...event, connection_id: connectionId };

/** GET /events, GET /events/{event_id}, POST /events/{event_id}/redeliver. */
export function eventRoutes({ store, log, dispatcher }: SandboxServices): Hono<ApiEnv> {
  const app = new Hono<ApiEnv>();
  const read = forMerchant({ store, scope: "events:read" });

  app.get("/events", read, (c) => {
    const limit = parseLimit(c.req.query("limit"));
    const typesRaw = c.req.query("types");
    const types = typesRaw
      ?.split(",")
      .map((t) => t.trim())
      .filter(Boolean);
    if (
      typesRaw !== undefined &&
      (!types || types.length === 0 || types.some((t) => !/^[a-z_*][a-z0-9_.*]*$/.test(t)))
    ) {
      throw invalidRequest([
        { field: "types", message: "must be comma-separated event types; wildcards like order.* allowed" },
      ]);
    }
    const after = c.req.query("after") || undefined;
    try {
      const page = log.page({
        merchantId: c.get("merchantId"),
        limit,
        ...(after ? { after } : {}),
        ...(types ? { types } : {}),
      });
      const connectionId = c.get("connection").id;
      return c.json({ data: page.data.map((e) => asSeenBy(e, connectionId)), has_more: page.has_more });
    } catch (error) {
      if (!(error instanceof ProblemError && error.code === "unknown_after")) throw error;
      // A client whose cursor fell out of retention must resync; it can tell this apart by field "after".
      throw invalidRequest(
        [
          {
            field: "after",
            message: "names no retained event of this merchant (unknown, or older than the 30-day retention)",
          },
        ],
        `after=${after}: no such retained event for this merchant; events are kept 30 days. Omit after to restart from the oldest retained event, and backfill orders with GET /orders?updated_since=…`,
      );
    }
  });

  app.get("/events/:event_id", read, (c) => {
    const event = log.get(c.req.param("event_id"));
    if (!event || event.merchant_id !== c.get("merchantId"))
      throw notFound(`event ${c.req.param("event_id")}`);
    return c.json(asSeenBy(event, c.get("connection").id));
  });

  app.post("/events/:event_id/redeliver", read, (c) => {
    const event = log.get(c.req.param("event_id"));
    if (!event || event.merchant_id !== c.get("merchantId"))
      throw notFound(`event ${c.req.param("event_id")}`);
    const deliveries = dispatcher.enqueue(event, c.get("application").id);
    return c.json({ event_id: event.id, status: "queued", deliveries: deliveries.length }, 202);
  });

  return app;
}
