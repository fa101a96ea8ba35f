import { Hono } from "hono";
import { z } from "zod";
import { parseJsonBody } from "../http/body.ts";
import { notFound } from "../problem.ts";
import type { SandboxServices } from "../services.ts";

/** The spec's grace period for an old client secret after rotation. */
export const OLD_SECRET_GRACE_MS = 24 * 3600 * 1000;

/**
 * Admin controls over applications: secret rotation (old secret valid 24 h), suspension, and scopes (the
 * application's approved ones, or with `merchant_id` the ones that merchant's connection granted).
 */
export function adminApplicationRoutes({ store, clock }: SandboxServices): Hono {
  const app = new Hono();
  const find = (id: string) => {
    const application = store.applications.get(id);
    if (!application) throw notFound(`application ${id}`);
    return application;
  };
  const describe = (id: string) => {
    const a = find(id);
    return {
      id: a.id,
      client_id: a.clientId,
      kind: a.kind,
      scopes: a.scopes,
      status: a.status,
      old_secret_valid_until: a.previousSecret ? new Date(a.previousSecret.until).toISOString() : null,
    };
  };

  app.get("/applications", (c) => c.json({ data: [...store.applications.keys()].map(describe) }));

  app.post("/applications/:id/rotate-secret", async (c) => {
    const body = await parseJsonBody(
      c,
      z.object({ client_secret: z.string().min(8, "must be at least 8 characters") }),
    );
    const application = find(c.req.param("id"));
    application.previousSecret = {
      secret: application.clientSecret,
      until: clock.now() + OLD_SECRET_GRACE_MS,
    };
    application.clientSecret = body.client_secret;
    return c.json(describe(application.id));
  });

  app.post("/applications/:id/suspend", (c) => {
    find(c.req.param("id")).status = "suspended";
    return c.json(describe(c.req.param("id")));
  });

  app.put("/applications/:id/scopes", async (c) => {
    const body = await parseJsonBody(
      c,
      z.object({ scopes: z.array(z.string().min(1)), merchant_id: z.string().min(1).optional() }),
    );
    const application = find(c.req.param("id"));
    if (body.merchant_id === undefined) {
      application.scopes = [...body.scopes];
      return c.json(describe(application.id));
    }
    const connection = store.connectionFor(application.id, body.merchant_id);
    if (!connection) throw notFound(`connection of ${application.id} to ${body.merchant_id}`);
    connection.scopes = [...body.scopes];
    return c.json({ merchant_id: connection.merchant_id, scopes: connection.scopes });
  });

  app.post("/applications/:id/resume", (c) => {
    find(c.req.param("id")).status = "active";
    return c.json(describe(c.req.param("id")));
  });

  return app;
}
