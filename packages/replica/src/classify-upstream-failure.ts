/**
 * What an upstream error means, for the worker's jobs and for catch-up alike. Classified by the fields
 * `@loops-sync/loops-client` errors carry (`status`, `code`, `retryAfter`, `errors`), so no class identity
 * is needed across packages.
 */
export type UpstreamFailure =
  /** 429: wait Retry-After without burning an attempt; the merchant pauses meanwhile. */
  (
    | { kind: "rate_limited"; retryAfterSeconds: number }
    /** 403 connection_not_active: the merchant left; revoke and make no more calls. */
    | { kind: "revoked" }
    /**
     * A refusal that is not about the event: hold every call of `scope` (see upstream-pause.ts) and re-probe,
     * failing nothing. `application`: 401 after the client's own token refresh, 403 insufficient_scope or
     * application_suspended. `merchant`: 403 scope_not_granted (that merchant did not grant a scope).
     */
    | { kind: "paused"; scope: "application" | "merchant"; cause: PauseCause; message: string }
    /**
     * 404, other 4xx, or an answer that is not what the spec promises: record, do not retry. `status` is the
     * HTTP answer's, if there was one; `refusedFields` are the request fields a 400 names in its field errors
     * (an `after` or page `cursor` upstream no longer accepts).
     */
    | { kind: "permanent"; message: string; status?: number; refusedFields: readonly string[] }
    /** 5xx, network, timeout, 401 after the client's own refresh, anything unknown: back off and retry. */
    | { kind: "transient" }
  ) & {
    /**
     * Loops refuses this application itself, for every merchant: 401 (the client has already fetched a new
     * token and retried once), 403 insufficient_scope or 403 application_suspended. Only an operator can fix
     * that (credentials, scopes, the partner account), so the CLI exits 4 instead of 1.
     */
    refused?: true;
  };

/** Why a scope is paused: the refusal's code (`unauthorized` for a 401 after a token refresh). */
export type PauseCause =
  | "unauthorized"
  | "insufficient_scope"
  | "application_suspended"
  | "scope_not_granted";

/** Seconds to wait on a 429 without Retry-After. */
const DEFAULT_RETRY_AFTER_SECONDS = 5;
/** 403 codes by which Loops refuses the application rather than one merchant. */
const APPLICATION_REFUSALS = new Set(["insufficient_scope", "application_suspended"]);
/** Bodies that break the spec (the client's invalid_response, our invalid_order) will not fix themselves. */
const INVALID_DATA = new Set(["invalid_response", "invalid_order", "invalid_argument"]);

interface ErrorFields {
  status?: unknown;
  code?: unknown;
  retryAfter?: unknown;
  errors?: unknown;
  message?: unknown;
  name?: unknown;
}

export function classifyUpstreamFailure(error: unknown): UpstreamFailure {
  if (typeof error !== "object" || error === null) return { kind: "transient" };
  const e = error as ErrorFields;
  const message = typeof e.message === "string" ? e.message : String(error);
  if (typeof e.status === "number") {
    const { status } = e;
    if (status === 429) {
      const retryAfter =
        typeof e.retryAfter === "number" && e.retryAfter >= 0 ? e.retryAfter : DEFAULT_RETRY_AFTER_SECONDS;
      return { kind: "rate_limited", retryAfterSeconds: retryAfter };
    }
    if (status === 403 && e.code === "connection_not_active") return { kind: "revoked" };
    if (status === 401) {
      return { kind: "paused", scope: "application", cause: "unauthorized", message, refused: true };
    }
    if (status === 403 && APPLICATION_REFUSALS.has(e.code as string)) {
      const cause = e.code as PauseCause;
      return { kind: "paused", scope: "application", cause, message, refused: true };
    }
    if (status === 403 && e.code === "scope_not_granted") {
      return { kind: "paused", scope: "merchant", cause: "scope_not_granted", message };
    }
    if (status === 408 || status >= 500) return { kind: "transient" };
    if (status >= 400) return { kind: "permanent", message, status, refusedFields: refusedFields(e) };
  }
  // Postgres refusing the data itself (SQLSTATE class 22, e.g. 22P05 for U+0000) will refuse it on every retry.
  if (e.name === "PostgresError" && typeof e.code === "string" && e.code.startsWith("22")) {
    return {
      kind: "permanent",
      message: `Postgres refused the data (${e.code}): ${message}`,
      refusedFields: [],
    };
  }
  if (INVALID_DATA.has(e.code as string)) return { kind: "permanent", message, refusedFields: [] };
  return { kind: "transient" };
}

/** The fields a 400's field errors name. */
function refusedFields(e: ErrorFields): string[] {
  if (e.status !== 400 || !Array.isArray(e.errors)) return [];
  return e.errors.flatMap((f) => {
    const field = (f as { field?: unknown } | null)?.field;
    return typeof field === "string" ? [field] : [];
  });
}
