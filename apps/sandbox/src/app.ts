import { Hono } from "hono";
import { bodyLimit } from "hono/body-limit";
import { apiFaults } from "./http/api-faults.ts";
import { authenticate } from "./http/auth.ts";
import type { ApiEnv } from "./http/context.ts";
import { onNotFound, onProblem } from "./http/problem-response.ts";
import { skewedDate } from "./http/skewed-date.ts";
import { tokenHandler } from "./http/tokens.ts";
import { invalidRequest } from "./problem.ts";
import { adminRoutes } from "./routes/admin.ts";
import { adminApplicationRoutes } from "./routes/admin-applications.ts";
import { adminBrandRoutes } from "./routes/admin-brands.ts";
import { brandRoutes } from "./routes/brands.ts";
import { businessProfileRoutes, DOCUMENTS_PATH, invalidFile } from "./routes/business-profile.ts";
import { connectionRoutes } from "./routes/connection.ts";
import { eventRoutes } from "./routes/events.ts";
import { locationRoutes } from "./routes/locations.ts";
import { MAX_MENU_BYTES, menuRoutes } from "./routes/menus.ts";
import { merchantRoutes } from "./routes/merchants.ts";
import { orderRoutes } from "./routes/orders.ts";
import type { SandboxServices } from "./services.ts";

/** Methods whose requests carry no body here: the body limit has nothing to check. */
const BODYLESS_METHODS = new Set(["GET", "HEAD", "OPTIONS"]);

/** The sandbox's HTTP surface: `/oauth/token`, the API under `/v1`, ground truth and controls under `/admin`. */
export function createSandboxApp(services: SandboxServices): Hono<ApiEnv> {
  const app = new Hono<ApiEnv>();
  app.onError(onProblem);
  app.notFound(onNotFound);
  // First, so the token answer, the API's and every error answer carry the same clock.
  app.use("*", skewedDate(services));

  app.get("/", (c) =>
    c.json({ service: "loops-sandbox", api_url: "/v1", auth_url: "/oauth/token", admin_url: "/admin" }),
  );
  app.post("/oauth/token", tokenHandler(services));

  const v1 = new Hono<ApiEnv>();
  v1.use("*", apiFaults(services));
  v1.use("*", authenticate(services));
  const limitBody = bodyLimit({
    maxSize: MAX_MENU_BYTES + 64 * 1024,
    onError: (c) => {
      // A document too large is the spec's invalid_file, whether this count or the route's sees it first.
      if (c.req.path.endsWith(DOCUMENTS_PATH)) throw invalidFile();
      throw invalidRequest([
        { field: "body", message: "is larger than 5 MB, the largest request the API takes" },
      ]);
    },
  });
  // Only where a request may carry a body: bodyLimit reads `c.req.raw.body`, which makes @hono/node-server
  // build a whole fetch Request for the call (a GET too), CPU the benchmarks' stand-in cannot spare.
  v1.use("*", (c, next) => (BODYLESS_METHODS.has(c.req.method) ? next() : limitBody(c, next)));
  v1.route("/", connectionRoutes(services));
  v1.route("/", merchantRoutes(services));
  v1.route("/", businessProfileRoutes(services));
  v1.route("/", brandRoutes(services));
  v1.route("/", menuRoutes(services));
  v1.route("/", locationRoutes(services));
  v1.route("/", orderRoutes(services));
  v1.route("/", eventRoutes(services));
  app.route("/v1", v1);

  app.route("/admin", adminRoutes(services));
  app.route("/admin", adminApplicationRoutes(services));
  app.route("/admin", adminBrandRoutes(services));
  return app;
}
