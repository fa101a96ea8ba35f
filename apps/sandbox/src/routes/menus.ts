import { Hono } from "hono";
import { z } from "zod";
import type { Job } from "../domain/resources.ts";
import { forMerchant } from "../http/auth.ts";
import { parseJsonBody } from "../http/body.ts";
import type { ApiEnv } from "../http/context.ts";
import { invalidRequest, notFound } from "../problem.ts";
import type { SandboxServices } from "../services.ts";

/** The spec's limit on a menu import body: "5 MB", read as 5,000,000 bytes like the client does. */
export const MAX_MENU_BYTES = 5_000_000;

const menuBody = z.looseObject({
  categories: z.array(z.unknown()),
  modifier_groups: z.array(z.unknown()).optional(),
  products: z.array(z.unknown()),
});
const publishBody = z.object({ location_ids: z.array(z.string().min(1)).optional() });

const jobShape = ({ merchant_id: _merchantId, ...job }: Job): Omit<Job, "merchant_id"> => job;

/** PUT/GET /brands/{brand_id}/menu, POST /brands/{brand_id}/menu/publish, GET /jobs/{job_id}. */
export function menuRoutes({ store, idempotency, jobs }: SandboxServices): Hono<ApiEnv> {
  const app = new Hono<ApiEnv>();
  const read = forMerchant({ store, scope: "menus:read" });
  const write = forMerchant({ store, scope: "menus:write" });
  const ownBrand = (merchantId: string, id: string): void => {
    const brand = store.brands.get(id);
    if (!brand || brand.merchant_id !== merchantId) throw notFound(`brand ${id}`);
  };
  const origin = (applicationId: string) => ({ type: "api" as const, application_id: applicationId });

  app.put("/brands/:brand_id/menu", write, async (c) => {
    const brandId = c.req.param("brand_id");
    ownBrand(c.get("merchantId"), brandId);
    // Read first: an answer sent while the client is still sending would reset its connection.
    const text = await c.req.text();
    if (Buffer.byteLength(text) > MAX_MENU_BYTES)
      throw invalidRequest([{ field: "body", message: "a menu import is at most 5 MB of JSON" }]);
    const body = await parseJsonBody(c, menuBody);
    const job = jobs.importMenu(c.get("merchantId"), brandId, body, origin(c.get("application").id));
    return c.json(jobShape(job), 202);
  });

  app.get("/brands/:brand_id/menu", read, (c) => {
    const brandId = c.req.param("brand_id");
    ownBrand(c.get("merchantId"), brandId);
    const menu = store.menus.get(brandId);
    if (!menu) throw notFound(`menu of brand ${brandId} (none imported yet)`);
    return c.json(menu);
  });

  app.post("/brands/:brand_id/menu/publish", write, idempotency.middleware(), async (c) => {
    const merchantId = c.get("merchantId");
    const brandId = c.req.param("brand_id");
    ownBrand(merchantId, brandId);
    const hasBody = (c.req.header("content-length") ?? "0") !== "0";
    const body = hasBody ? await parseJsonBody(c, publishBody) : {};
    const ofBrand = store
      .locationsOf(merchantId)
      .filter((l) => l.brand_id === brandId)
      .map((l) => l.id);
    const locationIds = body.location_ids ?? ofBrand;
    const foreign = locationIds.filter((id) => !ofBrand.includes(id));
    if (foreign.length) {
      throw invalidRequest(
        foreign.map((id) => ({
          field: "location_ids",
          message: `${id} is not a location of brand ${brandId}`,
        })),
      );
    }
    const job = jobs.publishMenu(merchantId, brandId, locationIds, origin(c.get("application").id));
    return c.json(jobShape(job), 202);
  });

  app.get("/jobs/:job_id", read, (c) => {
    const job = store.jobs.get(c.req.param("job_id"));
    if (!job || job.merchant_id !== c.get("merchantId")) throw notFound(`job ${c.req.param("job_id")}`);
    return c.json(jobShape(job));
  });

  return app;
}
