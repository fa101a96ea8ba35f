import type { Logger } from "@loops-sync/config";
import type { ForwardRequest, ForwardResult } from "@loops-sync/loops-client";
import { Hono } from "hono";
import { pino } from "pino";
import type { Registry } from "prom-client";
import { problemResponse } from "../problem-response.ts";
import type { ReceiverEnv } from "../receiver-env.ts";
import { answerUpstream } from "./answer-upstream.ts";
import { createGatewayMetrics, type GatewayOutcome } from "./gateway-metrics.ts";
import { matchGatewayRoute } from "./gateway-routes.ts";
import { bearerCheck } from "./gateway-token.ts";
import { readWrite } from "./read-write.ts";
import type { WriteMirror } from "./write-mirror.ts";

/** Where the gateway is mounted on the admin listener: the spec's paths follow. */
export const GATEWAY_PREFIX = "/loops/v1";

export interface GatewayOptions {
  /** GATEWAY_TOKEN: every request presents it as `Authorization: Bearer <token>`. */
  token: string;
  /** Sends a write to Loops with loops-sync's own token, inside the shared budget (`LoopsClient.forward`). */
  send: (request: ForwardRequest) => Promise<ForwardResult>;
  /** Applies an accepted write to the mirror before the answer. */
  mirror: WriteMirror;
  /** GATEWAY_WAIT_MS: longest wait for room in the request budget before 429. Default: 2000. */
  waitMs?: number;
  /** Where the gateway's series go (the admin listener's registry). */
  registry: Registry;
  /** Default: silent. Only routes, statuses and outcomes are logged, never what the backend sent. */
  logger?: Logger;
}

const SECONDS_OF_BUDGET_WAIT = 1;

/**
 * `/loops/v1/<path>`: the spec's writes (gateway-routes.ts) passed on to Loops with loops-sync's own token, as
 * live work of the shared request budget, and Loops' answer passed back unchanged; on a 2xx the returned
 * resource is in the mirror before the answer goes. Nothing is sent for a request refused here: no or a wrong
 * token (401), a read or an unknown path (405, 404), a body over the spec's limits (413), no budget (429).
 */
export function createGatewayApp({
  token,
  send,
  mirror,
  waitMs = 2000,
  registry,
  logger = pino({ level: "silent" }),
}: GatewayOptions): Hono<ReceiverEnv> {
  if (token.length === 0) throw new RangeError("token: expected a non-empty GATEWAY_TOKEN");
  if (!Number.isInteger(waitMs) || waitMs < 0)
    throw new RangeError(`waitMs: expected 0 or more, got ${waitMs}`);
  const presentsToken = bearerCheck(token);
  const metrics = createGatewayMetrics(registry);
  const app = new Hono<ReceiverEnv>();

  app.all("*", async function gateway(c) {
    const started = performance.now();
    let route = "other";
    const done = (outcome: GatewayOutcome, response: Response) => {
      metrics.writes.inc({ route, outcome });
      metrics.seconds.observe({ route }, (performance.now() - started) / 1000);
      return response;
    };
    if (!presentsToken(c.req.header("authorization"))) {
      return done(
        "unauthorized",
        problemResponse({
          status: 401,
          code: "unauthorized",
          title: "Unauthorized",
          detail: "send Authorization: Bearer <GATEWAY_TOKEN> (docs/gateway.md)",
          headers: { "www-authenticate": 'Bearer realm="loops-sync gateway"' },
        }),
      );
    }
    const path = c.req.path.slice(GATEWAY_PREFIX.length) || "/";
    const match = matchGatewayRoute(c.req.method, path);
    if ("notFound" in match) {
      return done(
        "not_found",
        problemResponse({
          status: 404,
          code: "not_found",
          title: "Not found",
          detail: "the gateway passes on the spec's writes only; read the mirror (docs/gateway.md)",
        }),
      );
    }
    if ("notAllowed" in match) {
      const allow = match.notAllowed.join(", ");
      return done(
        "not_allowed",
        problemResponse({
          status: 405,
          code: "method_not_allowed",
          title: "Method not allowed",
          detail: `the gateway passes on writes only (${allow} here); read the mirror (docs/gateway.md)`,
          headers: { allow },
        }),
      );
    }
    const write = match.found;
    route = write.route;
    const read = await readWrite(c, write);
    if ("refused" in read) return done("too_large", read.refused);
    const merchantId = c.req.header("service-merchant-id");
    const headers: Record<string, string> = {};
    for (const name of ["content-type", "idempotency-key", "service-merchant-id"]) {
      const value = c.req.header(name);
      if (value !== undefined) headers[name] = value;
    }
    const query = new URL(c.req.url).search;
    const result = await send({
      method: write.method,
      path: path + query,
      route: write.route,
      headers,
      body: read.body,
      merchantId,
      budgetWaitMs: waitMs,
    });
    if (result.kind !== "no_budget" && result.kind !== "no_token") metrics.budgetCalls.inc({ route });
    if (result.kind === "no_budget") {
      return done(
        "no_budget",
        problemResponse({
          status: 429,
          code: "rate_limited",
          title: "Too many requests",
          detail: `the application's request budget (LOOPS_MAX_RPS) had no room within ${waitMs} ms; nothing was sent`,
          headers: { "retry-after": String(SECONDS_OF_BUDGET_WAIT) },
        }),
      );
    }
    const answer = await answerUpstream(result, { write, merchantId, mirror, logger });
    logger.info(
      { route: write.route, method: write.method, status: answer.response.status, outcome: answer.outcome },
      "gateway write",
    );
    return done(answer.outcome, answer.response);
  });
  app.onError((error) => {
    // The error's class only: a message could quote what the backend sent.
    logger.error({ error: error.name }, "gateway: unexpected error");
    return problemResponse({ status: 500, code: "internal_error", title: "Internal error" });
  });
  return app;
}
