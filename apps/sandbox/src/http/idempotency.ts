import { createHash } from "node:crypto";
import type { MiddlewareHandler } from "hono";
import type { SandboxClock } from "../clock.ts";
import { invalidRequest, ProblemError } from "../problem.ts";
import type { ApiEnv } from "./context.ts";

/** The spec's idempotency window: 24 hours of sandbox time. */
export const IDEMPOTENCY_WINDOW_MS = 24 * 3600 * 1000;

interface Stored {
  fingerprint: string;
  at: number;
  status: number;
  body: string;
  contentType: string;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * Remembers responses by Idempotency-Key (scoped to application, merchant and route) for 24 sandbox hours:
 * the same key with the same request replays the original response; with a different request it is refused
 * with 422 idempotency_key_reused. Server errors are not remembered, so a retry after a 5xx really retries.
 */
export class IdempotencyStore {
  readonly #entries = new Map<string, Stored>();
  readonly #clock: SandboxClock;

  constructor(clock: SandboxClock) {
    this.#clock = clock;
  }

  middleware(): MiddlewareHandler<ApiEnv> {
    const entries = this.#entries;
    const clock = this.#clock;
    return async function idempotencyKey(c, next) {
      const key = c.req.header("idempotency-key");
      if (key === undefined) return next();
      if (!UUID.test(key)) throw invalidRequest([{ field: "Idempotency-Key", message: "must be a UUID" }]);
      const scope = [
        c.get("application").id,
        c.req.header("service-merchant-id") ?? "",
        c.req.method,
        c.req.path,
        key,
      ].join(" ");
      const raw = Buffer.from(await c.req.raw.clone().arrayBuffer());
      const fingerprint = createHash("sha256")
        .update(c.req.header("content-type") ?? "")
        .update("\n")
        .update(raw)
        .digest("hex");
      const now = clock.now();
      const seen = entries.get(scope);
      if (seen && now - seen.at < IDEMPOTENCY_WINDOW_MS) {
        if (seen.fingerprint !== fingerprint) {
          throw new ProblemError(422, "idempotency_key_reused", {
            detail:
              "this Idempotency-Key was used within 24 hours for a different request; use a new key for a new request",
          });
        }
        return new Response(seen.body, {
          status: seen.status,
          headers: { "content-type": seen.contentType, "idempotent-replayed": "true" },
        });
      }
      await next();
      if (c.res.status >= 500) return;
      const body = await c.res.clone().text();
      entries.set(scope, {
        fingerprint,
        at: now,
        status: c.res.status,
        body,
        contentType: c.res.headers.get("content-type") ?? "application/json",
      });
    };
  }
}
