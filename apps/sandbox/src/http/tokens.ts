import type { Context } from "hono";
import type { SandboxClock } from "../clock.ts";
import type { SandboxStore } from "../domain/store.ts";
import type { FaultInjector } from "../faults.ts";
import type { IdFactory } from "../ids.ts";
import { ProblemError } from "../problem.ts";
import type { SandboxStats } from "../stats.ts";

/** The lifetime the spec gives tokens, in seconds. */
export const TOKEN_LIFETIME_SECONDS = 900;

interface IssuedToken {
  applicationId: string;
  issuedAt: number;
}

export interface TokenCheck {
  applicationId: string;
}

/**
 * Opaque bearer tokens on sandbox time. The token-expiry fault shortens the life of every token, issued or
 * not, while the token endpoint keeps announcing 900 s, which is exactly what a careless cache trips over.
 */
export class TokenStore {
  readonly #tokens = new Map<string, IssuedToken>();
  readonly #clock: SandboxClock;
  readonly #ids: IdFactory;
  readonly #faults: FaultInjector;
  readonly #stats: SandboxStats;

  constructor({
    clock,
    ids,
    faults,
    stats,
  }: { clock: SandboxClock; ids: IdFactory; faults: FaultInjector; stats: SandboxStats }) {
    this.#clock = clock;
    this.#ids = ids;
    this.#faults = faults;
    this.#stats = stats;
  }

  issue(applicationId: string): { access_token: string; expires_in: number; token_type: "Bearer" } {
    if (this.#tokens.size > 10_000) this.#pruneExpired();
    const token = this.#ids.random("sbxat", 24);
    this.#tokens.set(token, { applicationId, issuedAt: this.#clock.now() });
    return { access_token: token, expires_in: TOKEN_LIFETIME_SECONDS, token_type: "Bearer" };
  }

  /** The application behind a live token, or undefined for a missing, unknown or expired one. */
  check(token: string): TokenCheck | undefined {
    const issued = this.#tokens.get(token);
    if (!issued) return undefined;
    const age = this.#clock.now() - issued.issuedAt;
    if (age >= TOKEN_LIFETIME_SECONDS * 1000) return undefined;
    const ttl = this.#faults.get().tokenTtlSeconds;
    if (ttl !== null && age >= ttl * 1000) {
      this.#stats.counters.apiFaults.token_expired_early++;
      return undefined;
    }
    return { applicationId: issued.applicationId };
  }

  /** Makes every issued token invalid at once (admin). */
  expireAll(): number {
    const n = this.#tokens.size;
    this.#tokens.clear();
    return n;
  }

  #pruneExpired(): void {
    const cutoff = this.#clock.now() - TOKEN_LIFETIME_SECONDS * 1000;
    for (const [token, t] of this.#tokens) if (t.issuedAt < cutoff) this.#tokens.delete(token);
  }
}

const invalidClient = (): ProblemError =>
  new ProblemError(401, "unauthorized", { detail: "client_id or client_secret is wrong" });

/** POST {auth_url}: OAuth 2.0 client credentials, form body or HTTP Basic. */
export function tokenHandler({
  store,
  tokens,
  stats,
  clock,
}: {
  store: SandboxStore;
  tokens: TokenStore;
  stats: SandboxStats;
  clock: SandboxClock;
}) {
  return async function issueToken(c: Context): Promise<Response> {
    stats.countTokenRequest();
    const type = c.req.header("content-type") ?? "";
    if (!type.startsWith("application/x-www-form-urlencoded")) {
      throw new ProblemError(400, "invalid_request", {
        detail: "send the token request as application/x-www-form-urlencoded",
        errors: [{ field: "content-type", message: "must be application/x-www-form-urlencoded" }],
      });
    }
    const form = new URLSearchParams(await c.req.text());
    let clientId = form.get("client_id");
    let clientSecret = form.get("client_secret");
    const basic = c.req.header("authorization");
    if (basic?.startsWith("Basic ")) {
      const decoded = Buffer.from(basic.slice(6), "base64").toString("utf8");
      const colon = decoded.indexOf(":");
      if (colon > 0) {
        clientId = decodeURIComponent(decoded.slice(0, colon));
        clientSecret = decodeURIComponent(decoded.slice(colon + 1));
      }
    }
    if (form.get("grant_type") !== "client_credentials") {
      throw new ProblemError(400, "invalid_request", {
        detail: "grant_type must be client_credentials",
        errors: [{ field: "grant_type", message: "must be client_credentials" }],
      });
    }
    if (!clientId || !clientSecret) {
      throw new ProblemError(400, "invalid_request", {
        detail: "client_id and client_secret are required",
        errors: [
          ...(clientId ? [] : [{ field: "client_id", message: "is required" }]),
          ...(clientSecret ? [] : [{ field: "client_secret", message: "is required" }]),
        ],
      });
    }
    const app = store.applicationByClientId(clientId);
    const previous = app?.previousSecret;
    const oldStillValid =
      previous !== null &&
      previous !== undefined &&
      previous.secret === clientSecret &&
      clock.now() < previous.until;
    if (!app || (app.clientSecret !== clientSecret && !oldStillValid)) throw invalidClient();
    if (app.status === "suspended")
      throw new ProblemError(403, "application_suspended", { detail: `application ${app.id} is suspended` });
    c.header("cache-control", "no-store");
    return c.json(tokens.issue(app.id));
  };
}
