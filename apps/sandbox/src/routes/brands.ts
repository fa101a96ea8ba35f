import { Hono } from "hono";
import { z } from "zod";
import type { Brand } from "../domain/resources.ts";
import { forMerchant } from "../http/auth.ts";
import { parseJsonBody } from "../http/body.ts";
import type { ApiEnv } from "../http/context.ts";
import { pageAfter, parseLimit } from "../http/pagination.ts";
import { bothLanguages, externalRef, httpsImage, optionalLanguages } from "../http/validators.ts";
import { notFound, ProblemError } from "../problem.ts";
import type { SandboxServices } from "../services.ts";

const fields = {
  external_ref: externalRef,
  name: bothLanguages,
  description: optionalLanguages.nullable(),
  logo_url: httpsImage.nullable(),
  cover_image_url: httpsImage.nullable(),
};
const createBody = z.object(fields).partial({ description: true, logo_url: true, cover_image_url: true });
const patchBody = z.object(fields).partial().strict();

/** Images are "downloaded and copied": the sandbox answers with the address its copy would have. */
const storedCopy = (brandId: string, kind: string, url: string | null | undefined): string | null =>
  url
    ? `https://cdn.sandbox.loops.invalid/brands/${brandId}/${kind}${url.match(/\.(jpe?g|png)/i)?.[0]?.toLowerCase() ?? ".jpg"}`
    : null;

/** POST /brands, GET /brands, GET /brands/{brand_id}, PATCH /brands/{brand_id}. */
export function brandRoutes({ store, world, ids, clock, idempotency }: SandboxServices): Hono<ApiEnv> {
  const app = new Hono<ApiEnv>();
  const read = forMerchant({ store, scope: "brands:read" });
  const write = forMerchant({ store, scope: "brands:write" });

  const conflict = (merchantId: string, ref: string, self?: string): void => {
    const other = store.brandsOf(merchantId).find((b) => b.external_ref === ref && b.id !== self);
    if (other)
      throw new ProblemError(409, "external_ref_conflict", {
        detail: `external_ref ${ref} is used by brand ${other.id}`,
        existingId: other.id,
      });
  };
  const own = (merchantId: string, id: string): Brand => {
    const brand = store.brands.get(id);
    if (!brand || brand.merchant_id !== merchantId) throw notFound(`brand ${id}`);
    return brand;
  };

  app.post("/brands", write, idempotency.middleware(), async (c) => {
    const merchantId = c.get("merchantId");
    const body = await parseJsonBody(c, createBody);
    conflict(merchantId, body.external_ref);
    const now = clock.iso();
    const id = ids.next("brd");
    const brand: Brand = {
      id,
      merchant_id: merchantId,
      external_ref: body.external_ref,
      name: body.name,
      description: body.description
        ? { en: body.description.en ?? null, ar: body.description.ar ?? null }
        : null,
      logo_url: storedCopy(id, "logo", body.logo_url),
      cover_image_url: storedCopy(id, "cover", body.cover_image_url),
      created_at: now,
      updated_at: now,
    };
    store.brands.set(id, brand);
    world.emit(
      "brand.created",
      merchantId,
      null,
      { type: "api", application_id: c.get("application").id },
      { brand_id: id },
    );
    return c.json(brand, 201);
  });

  app.get("/brands", read, (c) => {
    const limit = parseLimit(c.req.query("limit"));
    // Cursor keys are ids, so the list is in id order (seeded and created ids interleave otherwise).
    const rows = store.brandsOf(c.get("merchantId")).sort((a, b) => (a.id < b.id ? -1 : 1));
    const page = pageAfter(rows, {
      list: "brands",
      cursor: c.req.query("cursor"),
      limit,
      keyOf: (b) => [b.id],
      isAfter: (b, [id]) => b.id > String(id),
    });
    return c.json(page);
  });

  app.get("/brands/:brand_id", read, (c) => c.json(own(c.get("merchantId"), c.req.param("brand_id"))));

  app.patch("/brands/:brand_id", write, async (c) => {
    const merchantId = c.get("merchantId");
    const brand = own(merchantId, c.req.param("brand_id"));
    const body = await parseJsonBody(c, patchBody);
    if (body.external_ref !== undefined) {
      conflict(merchantId, body.external_ref, brand.id);
      brand.external_ref = body.external_ref;
    }
    if (body.name) brand.name = body.name;
    if (body.description !== undefined)
      brand.description = body.description
        ? { en: body.description.en ?? null, ar: body.description.ar ?? null }
        : null;
    if (body.logo_url !== undefined) brand.logo_url = storedCopy(brand.id, "logo", body.logo_url);
    if (body.cover_image_url !== undefined)
      brand.cover_image_url = storedCopy(brand.id, "cover", body.cover_image_url);
    brand.updated_at = clock.iso();
    world.emit(
      "brand.updated",
      merchantId,
      null,
      { type: "api", application_id: c.get("application").id },
      { brand_id: brand.id },
    );
    return c.json(brand);
  });

  return app;
}
