import type { Logger } from "@loops-sync/config";
import { pendingMigrations, type Sql, withTimeout } from "@loops-sync/db";
import type { Hono } from "hono";
import { problemResponse } from "./problem-response.ts";
import type { ReceiverEnv } from "./receiver-env.ts";

export interface HealthRoutesOptions {
  sql: Sql;
  /** Why the process should be restarted, or undefined. */
  liveness: () => { code: string; detail: string } | undefined;
  /** True once shutdown began: /readyz turns 503 so load balancers stop sending. */
  draining: () => boolean;
  /** Longest wait for the database in /readyz. Default: 2000 ms. */
  readyTimeoutMs?: number;
  /** Counts the readiness query as a connection in use while it runs. */
  onQuery?: (delta: 1 | -1) => void;
  /** Where a failed readiness check is logged. Default: none. */
  logger?: Logger;
}

const unavailable = (code: string, detail: string) =>
  problemResponse({ status: 503, code, title: "Not ready", detail, headers: { "retry-after": "5" } });

/**
 * GET /healthz (the process is alive) and /readyz (alive, not draining, database answers, migrations current).
 * /metrics and the operator page live on the admin listener, never on this public one.
 */
export function mountHealthRoutes(
  app: Hono<ReceiverEnv>,
  { sql, liveness, draining, readyTimeoutMs = 2000, onQuery, logger }: HealthRoutesOptions,
): void {
  app.get("/healthz", (c) => {
    const problem = liveness();
    return problem ? unavailable(problem.code, problem.detail) : c.json({ status: "ok" });
  });

  app.get("/readyz", async (c) => {
    if (draining()) return unavailable("shutting_down", "the receiver is shutting down");
    const problem = liveness();
    if (problem) return unavailable(problem.code, problem.detail);
    onQuery?.(1);
    try {
      const pending = await withTimeout(
        (async () => {
          await sql`select 1`;
          return await pendingMigrations(sql);
        })(),
        readyTimeoutMs,
      );
      if (pending.length > 0) {
        return unavailable("migrations_pending", `run loops-sync migrate; pending: ${pending.join(", ")}`);
      }
      return c.json({ status: "ready" });
    } catch (error) {
      // The driver's error stays in the log; the answer (public on the webhook port) only says what to do.
      const { code, message } = error as { code?: string; message?: string };
      logger?.warn({ code, cause: message }, "readiness: the database does not answer");
      return unavailable("database_unavailable", "the database does not answer; retry later");
    } finally {
      onQuery?.(-1);
    }
  });
}
