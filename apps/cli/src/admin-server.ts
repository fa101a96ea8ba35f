import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import { serve } from "@hono/node-server";
import type { Sql } from "@loops-sync/db";
import { GATEWAY_PREFIX, problemResponse, type ReceiverEnv } from "@loops-sync/receiver";
import { createStatusPage } from "@loops-sync/status";
import { Hono } from "hono";
import type { Registry } from "prom-client";
import { requireAdminToken } from "./admin-auth.ts";
import type { HealthProblem, ProcessHealth } from "./process-health.ts";

export interface AdminServer {
  /** Base address, e.g. http://127.0.0.1:9091 (0.0.0.0 shown as 127.0.0.1). */
  url: string;
  close(): Promise<void>;
}

export interface StartAdminServerOptions {
  registry: Registry;
  health: ProcessHealth;
  /** Pool the operator page reads through. */
  sql: Sql;
  /** Serve the operator page at /status. Default: true. */
  statusPage?: boolean;
  /** When set, every path but /healthz and /readyz needs it (ADMIN_TOKEN). Default: none. */
  token?: string;
  /** Default: 9091; 0 picks a free port. */
  port?: number;
  /** Default: "127.0.0.1": nothing private faces a network unless the operator says so. */
  host?: string;
  /** The gateway (GATEWAY_TOKEN), served at /loops/v1 with its own token, not ADMIN_TOKEN. Default: off. */
  gateway?: Hono<ReceiverEnv> | undefined;
}

const notReady = (problem: HealthProblem) =>
  problemResponse({
    status: 503,
    code: problem.code,
    title: "Not ready",
    detail: problem.detail,
    headers: { "retry-after": "5" },
  });

/** The admin routes of one process: /metrics, /status, /status/api, /healthz, /readyz, and the gateway when on. */
export function createAdminApp({
  registry,
  health,
  sql,
  statusPage = true,
  token,
  gateway,
}: Omit<StartAdminServerOptions, "port" | "host">): Hono<ReceiverEnv> {
  const app = new Hono<ReceiverEnv>();
  // Before the admin token: a gateway request answers here, with GATEWAY_TOKEN checked by the gateway itself
  // (a backend that writes need not read /metrics).
  if (gateway) app.route(GATEWAY_PREFIX, gateway);
  if (token) app.use(requireAdminToken({ token, open: ["/healthz", "/readyz"] }));
  app.get("/healthz", (c) => {
    const problem = health.liveness();
    return problem ? notReady(problem) : c.json({ status: "ok" });
  });
  app.get("/readyz", async (c) => {
    const problem = await health.readiness();
    return problem ? notReady(problem) : c.json({ status: "ready" });
  });
  app.get("/metrics", async (c) => {
    const text = await registry.metrics();
    return c.body(text, 200, { "content-type": registry.contentType, "cache-control": "no-store" });
  });
  if (statusPage) app.route("/status", createStatusPage({ sql }));
  app.notFound(() => problemResponse({ status: 404, code: "not_found", title: "Not found" }));
  return app;
}

/** Serves the admin routes on their own listener, apart from the webhook port that faces Loops. */
export async function startAdminServer({
  port = 9091,
  host = "127.0.0.1",
  ...options
}: StartAdminServerOptions): Promise<AdminServer> {
  const app = createAdminApp(options);
  const server = await new Promise<Server>((resolve, reject) => {
    const s = serve({ fetch: app.fetch, port, hostname: host }, () => resolve(s as Server)) as Server;
    s.once("error", reject);
  });
  const { port: actual } = server.address() as AddressInfo;
  const shown = host === "0.0.0.0" || host === "::" ? "127.0.0.1" : host;
  return {
    url: `http://${shown.includes(":") ? `[${shown}]` : shown}:${actual}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
