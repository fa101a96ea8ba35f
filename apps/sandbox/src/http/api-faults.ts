import type { Context, MiddlewareHandler } from "hono";
import { routePath } from "hono/route";
import type { FaultInjector } from "../faults.ts";
import type { IdFactory } from "../ids.ts";
import { ProblemError } from "../problem.ts";
import type { SandboxStats } from "../stats.ts";
import type { ApiEnv } from "./context.ts";

/** `GET /v1/orders/:order_id` → `GET /orders/{order_id}`: the spec's own way to write a path. */
export function routeLabel(method: string, path: string): string {
  return `${method} ${path.replace(/^\/v1/, "").replace(/:([A-Za-z_]+)/g, "{$1}") || "/"}`;
}

/**
 * Waits `ms`, or less if the client hangs up (or the sandbox closes) meanwhile; false then. It listens for the
 * response's socket closing: `c.req.raw.signal` would make @hono/node-server build a whole fetch Request for
 * every slowed call, and the sandbox shares the service's CPU in the benchmarks (bench/results/).
 */
async function slowAnswer(c: Context<ApiEnv>, ms: number, stats: SandboxStats): Promise<boolean> {
  const { outgoing } = c.env;
  if (outgoing.destroyed) return false;
  stats.counters.slowAnswersWaiting++;
  return await new Promise<boolean>((resolve) => {
    const hungUp = () => {
      clearTimeout(timer);
      resolve(false);
    };
    const timer = setTimeout(() => {
      outgoing.off("close", hungUp);
      resolve(true);
    }, ms);
    outgoing.once("close", hungUp);
  }).finally(() => {
    stats.counters.slowAnswersWaiting--;
  });
}

/**
 * First in the /v1 chain: gives the request an id, counts it per route template and rolls the API fault dice
 * (reset, 429 with Retry-After, 503, slow answer) before the request reaches auth.
 */
export function apiFaults({
  faults,
  stats,
  ids,
}: {
  faults: FaultInjector;
  stats: SandboxStats;
  ids: IdFactory;
}): MiddlewareHandler<ApiEnv> {
  return async function faultsAndCounting(c, next) {
    c.set("requestId", ids.random("req", 8));
    c.header("x-request-id", c.get("requestId"));
    stats.countApiCall(routeLabel(c.req.method, routePath(c, -1)));
    const fault = faults.rollApi();
    if (fault) stats.counters.apiFaults[fault.kind]++;
    switch (fault?.kind) {
      case "reset":
        c.env?.incoming?.socket.destroy();
        // The socket is gone; this response is never written.
        return c.body(null, 500);
      case "rate_limited":
        throw new ProblemError(429, "rate_limited", {
          detail: `too many requests; retry after ${fault.retryAfter} s`,
          headers: { "retry-after": String(fault.retryAfter) },
        });
      case "server_error":
        throw new ProblemError(503, "upstream_unavailable", {
          detail: "the service is temporarily unavailable; retry with backoff",
        });
      case "slow":
        if (!(await slowAnswer(c, fault.ms, stats))) return c.body(null, 500);
        break;
    }
    await next();
  };
}
