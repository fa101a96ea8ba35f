import { Hono } from "hono";
import { z } from "zod";
import type { Merchant } from "../domain/resources.ts";
import { forMerchant } from "../http/auth.ts";
import { parseJsonBody } from "../http/body.ts";
import type { ApiEnv } from "../http/context.ts";
import { bothLanguages, e164, email, externalRef } from "../http/validators.ts";
import { invalidRequest, ProblemError } from "../problem.ts";
import type { SandboxServices } from "../services.ts";

const createBody = z.object({
  external_ref: externalRef,
  name: bothLanguages,
  owner: z.object({ name: z.string().min(1), email, phone: e164 }),
});

const patchBody = z.object({ external_ref: externalRef, name: bothLanguages }).partial().strict();

/** POST /merchants, GET /merchant, PATCH /merchant. */
export function merchantRoutes({ store, world, ids, clock, idempotency }: SandboxServices): Hono<ApiEnv> {
  const app = new Hono<ApiEnv>();

  const conflict = (applicationId: string, ref: string, self?: string): void => {
    for (const connection of store.connectionsOf(applicationId)) {
      const other = store.merchants.get(connection.merchant_id);
      if (other && other.external_ref === ref && other.id !== self) {
        throw new ProblemError(409, "external_ref_conflict", {
          detail: `external_ref ${ref} is used by merchant ${other.id}`,
          existingId: other.id,
        });
      }
    }
  };

  app.post("/merchants", idempotency.middleware(), async (c) => {
    const application = c.get("application");
    if (c.req.header("service-merchant-id") !== undefined) {
      throw invalidRequest([
        { field: "Service-Merchant-Id", message: "must not be sent when creating a merchant" },
      ]);
    }
    if (!application.scopes.includes("merchants:write")) {
      throw new ProblemError(403, "insufficient_scope", {
        detail: "the application is not approved for scope merchants:write",
      });
    }
    if (application.kind === "direct") {
      throw new ProblemError(403, "insufficient_scope", {
        detail: "a direct integration has a single merchant and cannot create merchants",
      });
    }
    const body = await parseJsonBody(c, createBody);
    conflict(application.id, body.external_ref);
    const existingOwner = [...store.merchants.values()].find(
      (m) => m.owner.email.toLowerCase() === body.owner.email.toLowerCase(),
    );
    if (existingOwner) {
      throw new ProblemError(409, "merchant_exists", {
        detail: "a merchant with this owner email already exists; ask its owner to connect it",
        existingId: existingOwner.id,
      });
    }
    const now = clock.iso();
    const merchant: Merchant = {
      id: ids.next("mer"),
      external_ref: body.external_ref,
      name: body.name,
      status: "active",
      owner: { ...body.owner, invitation: "sent" },
      business_profile_status: "draft",
      created_at: now,
    };
    store.merchants.set(merchant.id, merchant);
    store.profiles.set(merchant.id, {
      merchant_id: merchant.id,
      status: "draft",
      details: null,
      documents: [],
      required_documents: ["commercial_registration", "vat_certificate", "national_address_certificate"],
      review: { submitted_at: null, reviewed_at: null, notes: null },
    });
    const connectionId = ids.next("con");
    store.connections.set(connectionId, {
      id: connectionId,
      application_id: application.id,
      merchant_id: merchant.id,
      external_ref: body.external_ref,
      status: "active",
      scopes: [...application.scopes],
      location_ids: [],
      include_future_locations: true,
      created_at: now,
    });
    world.emit(
      "merchant.created",
      merchant.id,
      null,
      { type: "api", application_id: application.id },
      { merchant_id: merchant.id },
    );
    return c.json(merchant, 201);
  });

  app.get("/merchant", forMerchant({ store, scope: "merchants:read" }), (c) =>
    c.json(store.merchants.get(c.get("merchantId"))),
  );

  app.patch("/merchant", forMerchant({ store, scope: "merchants:write" }), async (c) => {
    const merchant = store.merchants.get(c.get("merchantId"))!;
    const body = await parseJsonBody(c, patchBody);
    if (body.external_ref !== undefined) {
      conflict(c.get("application").id, body.external_ref, merchant.id);
      merchant.external_ref = body.external_ref;
    }
    if (body.name) merchant.name = body.name;
    world.emit(
      "merchant.updated",
      merchant.id,
      null,
      { type: "api", application_id: c.get("application").id },
      { merchant_id: merchant.id },
    );
    return c.json(merchant);
  });

  return app;
}
