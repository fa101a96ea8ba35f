/**
 * What an upstream error means for a job. Classified by the fields `@loops-sync/loops-client` errors
 * carry (`status`, `code`, `retryAfter`), so the worker needs no class identity across packages.
 */
export type UpstreamFailure =
  /** 429: wait Retry-After without burning an attempt; the merchant pauses meanwhile. */
  | { kind: "rate_limited"; retryAfterSeconds: number }
  /** 403 connection_not_active: the merchant left; revoke and make no more calls. */
  | { kind: "revoked" }
  /** 404, other 4xx, or an answer that is not what the spec promises: record, do not retry. */
  | { kind: "permanent"; message: string }
  /** 5xx, network, timeout, 401 after the client's own refresh, anything unknown: let graphile-worker back off. */
  | { kind: "transient" };

/** Seconds to wait on a 429 without Retry-After. */
const DEFAULT_RETRY_AFTER_SECONDS = 5;

export function classifyUpstreamFailure(error: unknown): UpstreamFailure {
  if (typeof error !== "object" || error === null) return { kind: "transient" };
  const e = error as {
    status?: unknown;
    code?: unknown;
    retryAfter?: unknown;
    message?: unknown;
    name?: unknown;
  };
  const message = typeof e.message === "string" ? e.message : String(error);
  if (typeof e.status === "number") {
    if (e.status === 429) {
      const retryAfter =
        typeof e.retryAfter === "number" && e.retryAfter >= 0 ? e.retryAfter : DEFAULT_RETRY_AFTER_SECONDS;
      return { kind: "rate_limited", retryAfterSeconds: retryAfter };
    }
    if (e.status === 403 && e.code === "connection_not_active") return { kind: "revoked" };
    if (e.status === 401 || e.status === 408 || e.status >= 500) return { kind: "transient" };
    if (e.status >= 400) return { kind: "permanent", message };
  }
  // Postgres refusing the data itself (SQLSTATE class 22, e.g. 22P05 for U+0000) will refuse it on every retry.
  if (e.name === "PostgresError" && typeof e.code === "string" && e.code.startsWith("22")) {
    return { kind: "permanent", message: `Postgres refused the data (${e.code}): ${message}` };
  }
  // Bodies that break the spec (the client's invalid_response, our invalid_order) will not fix themselves.
  if (e.code === "invalid_response" || e.code === "invalid_order" || e.code === "invalid_argument") {
    return { kind: "permanent", message };
  }
  return { kind: "transient" };
}
