import { Hono } from "hono";
import { z } from "zod";
import { parseJsonBody } from "../http/body.ts";
import { notFound } from "../problem.ts";
import type { SandboxServices } from "../services.ts";

/** What the partner portal does: a person's change, made by no application. */
const PORTAL = { type: "web_app", application_id: null } as const;

const text = z.object({ en: z.string().min(1), ar: z.string().min(1) });

/**
 * Brand and menu changes made outside the API, for tests and demos: a menu imported in the partner portal
 * (a job whose job.completed names no application), and a brand changed with no event at all (as a change
 * Loops makes itself might be), which only a reconcile can bring in.
 */
export function adminBrandRoutes({ store, jobs, clock }: SandboxServices): Hono {
  const app = new Hono();
  const brandOf = (id: string) => {
    const brand = store.brands.get(id);
    if (!brand) throw notFound(`brand ${id}`);
    return brand;
  };

  app.post("/brands/:id/menu", async (c) => {
    const brand = brandOf(c.req.param("id"));
    const body = await parseJsonBody(
      c,
      z.looseObject({
        categories: z.array(z.unknown()),
        modifier_groups: z.array(z.unknown()).optional(),
        products: z.array(z.unknown()),
      }),
    );
    const { merchant_id: _merchantId, ...job } = jobs.importMenu(brand.merchant_id, brand.id, body, PORTAL);
    return c.json(job, 202);
  });

  app.patch("/brands/:id", async (c) => {
    const brand = brandOf(c.req.param("id"));
    const body = await parseJsonBody(c, z.object({ name: text }).strict());
    brand.name = body.name;
    brand.updated_at = clock.iso();
    return c.json(brand);
  });

  return app;
}
