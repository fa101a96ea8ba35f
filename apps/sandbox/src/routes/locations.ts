import { Hono } from "hono";
import { z } from "zod";
import { locationReadShape, locationWriteShape } from "../domain/location-shapes.ts";
import type { Location } from "../domain/resources.ts";
import { forMerchant } from "../http/auth.ts";
import { parseJsonBody } from "../http/body.ts";
import type { ApiEnv } from "../http/context.ts";
import { pageAfter, parseLimit } from "../http/pagination.ts";
import {
  address,
  bothLanguages,
  e164,
  email,
  externalRef,
  openingHours,
  timezone,
} from "../http/validators.ts";
import { invalidRequest, notFound, ProblemError } from "../problem.ts";
import type { SandboxServices } from "../services.ts";

const createBody = z.object({
  external_ref: externalRef,
  brand_id: z.string().min(1),
  name: bothLanguages,
  phone: e164,
  email: email.nullable().optional(),
  address,
  timezone: timezone.default("Asia/Riyadh"),
  opening_hours: openingHours,
});

const patchBody = z
  .object({
    external_ref: externalRef,
    name: bothLanguages,
    phone: e164,
    email: email.nullable(),
    address,
    opening_hours: openingHours,
    brand_id: z.string(),
  })
  .partial()
  .strict();

/** Locations: list, read, create, update, and their channel connections. */
export function locationRoutes({ store, world, ids, clock, idempotency }: SandboxServices): Hono<ApiEnv> {
  const app = new Hono<ApiEnv>();
  const idempotent = idempotency.middleware();
  const read = forMerchant({ store, scope: "locations:read" });
  const write = forMerchant({ store, scope: "locations:write" });

  const visible = (merchantId: string, locationIds: string[], id: string): Location => {
    const location = store.locations.get(id);
    if (!location || location.merchant_id !== merchantId || !locationIds.includes(id))
      throw notFound(`location ${id}`);
    return location;
  };
  const conflict = (merchantId: string, ref: string, self?: string): void => {
    const other = store.locationsOf(merchantId).find((l) => l.external_ref === ref && l.id !== self);
    if (other) {
      throw new ProblemError(409, "external_ref_conflict", {
        detail: `external_ref ${ref} is used by location ${other.id}`,
        existingId: other.id,
      });
    }
  };

  app.get("/locations", read, (c) => {
    const limit = parseLimit(c.req.query("limit"));
    const shared = c.get("connection").location_ids;
    // Cursor keys are ids, so the list is in id order (seeded and created ids interleave otherwise).
    const rows = store
      .locationsOf(c.get("merchantId"))
      .filter((l) => shared.includes(l.id))
      .sort((a, b) => (a.id < b.id ? -1 : 1));
    const page = pageAfter(rows, {
      list: "locations",
      cursor: c.req.query("cursor"),
      limit,
      keyOf: (l) => [l.id],
      isAfter: (l, [id]) => l.id > String(id),
    });
    return c.json({ data: page.data.map(locationReadShape), next_cursor: page.next_cursor });
  });

  app.get("/locations/:location_id", read, (c) =>
    c.json(
      locationReadShape(
        visible(c.get("merchantId"), c.get("connection").location_ids, c.req.param("location_id")),
      ),
    ),
  );

  app.get("/locations/:location_id/channel-connections", read, (c) => {
    const location = visible(
      c.get("merchantId"),
      c.get("connection").location_ids,
      c.req.param("location_id"),
    );
    return c.json({ data: store.channelConnectionsOf(location.id) });
  });

  app.post("/locations", write, idempotent, async (c) => {
    const body = await parseJsonBody(c, createBody);
    const merchantId = c.get("merchantId");
    const brand = store.brands.get(body.brand_id);
    if (!brand || brand.merchant_id !== merchantId) throw notFound(`brand ${body.brand_id}`);
    conflict(merchantId, body.external_ref);
    const now = clock.iso();
    const location: Location = {
      id: ids.next("loc"),
      merchant_id: merchantId,
      brand_id: brand.id,
      external_ref: body.external_ref,
      name: body.name,
      status: "closed",
      phone: body.phone,
      email: body.email ?? null,
      address: {
        ...body.address,
        district: body.address.district ?? null,
        postal_code: body.address.postal_code ?? null,
      },
      timezone: body.timezone,
      opening_hours: body.opening_hours,
      created_at: now,
      updated_at: now,
    };
    store.locations.set(location.id, location);
    for (const connection of store.connections.values()) {
      if (connection.merchant_id === merchantId && connection.include_future_locations)
        connection.location_ids.push(location.id);
    }
    world.emit(
      "location.created",
      merchantId,
      location.id,
      { type: "api", application_id: c.get("application").id },
      { location_id: location.id },
    );
    return c.json(locationWriteShape(location), 201);
  });

  app.patch("/locations/:location_id", write, async (c) => {
    const merchantId = c.get("merchantId");
    const location = visible(merchantId, c.get("connection").location_ids, c.req.param("location_id"));
    const body = await parseJsonBody(c, patchBody);
    if (body.brand_id !== undefined && body.brand_id !== location.brand_id) {
      throw invalidRequest([{ field: "brand_id", message: "a location cannot move to another brand" }]);
    }
    if (body.external_ref !== undefined) conflict(merchantId, body.external_ref, location.id);
    if (body.external_ref !== undefined) location.external_ref = body.external_ref;
    if (body.name) location.name = body.name;
    if (body.phone) location.phone = body.phone;
    if (body.email !== undefined) location.email = body.email;
    if (body.address)
      location.address = {
        ...body.address,
        district: body.address.district ?? null,
        postal_code: body.address.postal_code ?? null,
      };
    if (body.opening_hours) location.opening_hours = body.opening_hours;
    location.updated_at = clock.iso();
    world.emit(
      "location.updated",
      merchantId,
      location.id,
      { type: "api", application_id: c.get("application").id },
      { location_id: location.id },
    );
    return c.json(locationWriteShape(location));
  });

  return app;
}
