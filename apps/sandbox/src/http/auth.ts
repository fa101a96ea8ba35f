import type { MiddlewareHandler } from "hono";
import type { SandboxStore } from "../domain/store.ts";
import { ProblemError } from "../problem.ts";
import type { ApiEnv } from "./context.ts";
import type { TokenStore } from "./tokens.ts";

/** Bearer check for every /v1 call: 401 unauthorized for a missing, unknown or expired token. */
export function authenticate({
  store,
  tokens,
}: {
  store: SandboxStore;
  tokens: TokenStore;
}): MiddlewareHandler<ApiEnv> {
  return async function bearer(c, next) {
    const header = c.req.header("authorization") ?? "";
    const match = /^Bearer\s+(\S+)$/i.exec(header);
    if (!match)
      throw new ProblemError(401, "unauthorized", { detail: "Authorization: Bearer <token> is missing" });
    const check = tokens.check(match[1]!);
    if (!check)
      throw new ProblemError(401, "unauthorized", {
        detail: "the access token is invalid or expired; get a new one",
      });
    const application = store.applications.get(check.applicationId);
    if (!application) throw new ProblemError(401, "unauthorized", { detail: "the access token is invalid" });
    if (application.status === "suspended") {
      throw new ProblemError(403, "application_suspended", {
        detail: `application ${application.id} is suspended`,
      });
    }
    c.set("application", application);
    await next();
  };
}

export interface ForMerchantOptions {
  store: SandboxStore;
  /** Scope the call needs, approved for the application and granted by the merchant. Default: none. */
  scope?: string;
}

/**
 * Resolves Service-Merchant-Id to a connection of the caller's application and checks it: 400
 * merchant_required (platform apps must name the merchant), 404 merchant_not_found, 403 connection_not_active,
 * 403 insufficient_scope, 403 scope_not_granted.
 */
export function forMerchant({ store, scope }: ForMerchantOptions): MiddlewareHandler<ApiEnv> {
  return async function merchantConnection(c, next) {
    const application = c.get("application");
    const named = c.req.header("service-merchant-id")?.trim();
    let merchantId = named;
    if (!merchantId) {
      const own = store.connectionsOf(application.id);
      if (application.kind === "platform" || own.length !== 1) {
        throw new ProblemError(400, "merchant_required", {
          detail: "name the merchant with the Service-Merchant-Id header",
        });
      }
      merchantId = own[0]!.merchant_id;
    }
    const connection = store.connectionFor(application.id, merchantId);
    if (!connection) {
      throw new ProblemError(404, "merchant_not_found", {
        detail: `merchant ${merchantId} does not exist or is not connected to this application`,
      });
    }
    if (connection.status !== "active") {
      throw new ProblemError(403, "connection_not_active", {
        detail: `merchant ${merchantId} revoked this application's access; stop calling for this merchant`,
      });
    }
    if (scope && !application.scopes.includes(scope)) {
      throw new ProblemError(403, "insufficient_scope", {
        detail: `the application is not approved for scope ${scope}`,
      });
    }
    if (scope && !connection.scopes.includes(scope)) {
      throw new ProblemError(403, "scope_not_granted", {
        detail: `merchant ${merchantId} did not grant scope ${scope}`,
      });
    }
    c.set("merchantId", merchantId);
    c.set("connection", connection);
    await next();
  };
}
