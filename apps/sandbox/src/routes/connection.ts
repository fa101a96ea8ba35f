import { Hono } from "hono";
import { forMerchant } from "../http/auth.ts";
import type { ApiEnv } from "../http/context.ts";
import type { SandboxServices } from "../services.ts";

/** GET /connection and GET /channels. */
export function connectionRoutes({ store }: SandboxServices): Hono<ApiEnv> {
  const app = new Hono<ApiEnv>();

  app.get("/connection", forMerchant({ store }), (c) => {
    const { application_id: _applicationId, ...connection } = c.get("connection");
    return c.json(connection);
  });

  app.get("/channels", forMerchant({ store }), (c) => c.json({ data: [...store.channels.values()] }));

  return app;
}
