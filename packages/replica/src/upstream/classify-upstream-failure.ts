import { unstorableReason } from "@loops-sync/db";
import { kindOfStatus, LoopsError, type LoopsErrorKind } from "@loops-sync/loops-client";

/**
 * What an upstream error means, for the worker's jobs and for catch-up alike: the one place that turns a
 * LoopsError's `kind` (see LoopsErrorKind in `@loops-sync/loops-client`) into retry, pause, revoke or fail.
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
    | {
        kind: "paused";
        scope: "application" | "merchant";
        cause: PauseCause;
        message: string;
        /** The refused call's route (the spec's template), when known: the probe calls it again. */
        route?: string;
      }
    /**
     * 403 insufficient_scope (`application`) or scope_not_granted (`merchant`) on a call that is not on the
     * hot path (EXTRA_RESOURCES): only that resource family is set aside (resource-refusals.ts) and retried
     * after a backoff; every other call, orders included, goes on. The job that met it succeeds.
     */
    | {
        kind: "set_aside";
        scope: "application" | "merchant";
        resource: ExtraResource;
        cause: "insufficient_scope" | "scope_not_granted";
        message: string;
      }
    /**
     * 404, other 4xx, an answer that is not what the spec promises, or content Postgres can never store
     * (`unstorableReason` in @loops-sync/db): record, do not retry. `status` is the HTTP answer's, if there
     * was one; `refusedFields` are the request fields a 400 names in its field errors (an `after` or page
     * `cursor` upstream no longer accepts).
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

/**
 * The resource families off the hot path, by the route (the spec's path template) of their calls: a scope
 * refusal on one of these sets that family aside instead of pausing the scope. The hot path, which keeps the
 * pause: the token, /orders*, /events* and /connection. Locations (channel connections included, both under
 * locations:read) are off it: an order naming a location is mirrored without it. A route on neither list is
 * its own family, named by its first segment.
 */
export const EXTRA_RESOURCES = [
  { resource: "locations", route: /^\/locations(\/|$)/ },
  { resource: "menus", route: /^\/brands\/[^/]+\/menu(\/|$)/ },
  { resource: "brands", route: /^\/brands(\/|$)/ },
  { resource: "business_profile", route: /^\/merchant\/business-profile(\/|$)/ },
  { resource: "merchant", route: /^\/merchants?$/ },
  { resource: "jobs", route: /^\/jobs(\/|$)/ },
  { resource: "channels", route: /^\/channels(\/|$)/ },
] as const;

/** A resource family of EXTRA_RESOURCES (or another route's first segment). */
export type ExtraResource = (typeof EXTRA_RESOURCES)[number]["resource"] | (string & {});

const HOT_PATH = /^(\{auth_url\}|\/(orders|events|connection|sandbox)(\/|$))/;

/** The extra resource family a call's route belongs to; undefined on the hot path or without a route. */
export function extraResourceOf(route: unknown): ExtraResource | undefined {
  if (typeof route !== "string" || !route.startsWith("/") || HOT_PATH.test(route)) return undefined;
  const named = EXTRA_RESOURCES.find((r) => r.route.test(route));
  return named?.resource ?? route.split("/")[1] ?? undefined;
}

/** Seconds to wait on a 429 without Retry-After. */
const DEFAULT_RETRY_AFTER_SECONDS = 5;
/** 403 codes by which Loops refuses the application rather than one merchant. */
const APPLICATION_REFUSALS = new Set(["insufficient_scope", "application_suspended"]);
/** Bodies that break the spec (the client's invalid_response, our invalid_order) will not fix themselves. */
const INVALID_DATA = new Set(["invalid_response", "invalid_order"]);

interface ErrorFields {
  status?: unknown;
  code?: unknown;
  retryAfter?: unknown;
  errors?: unknown;
  message?: unknown;
  name?: unknown;
  route?: unknown;
}

/**
 * The failure policy, written once: what a LoopsError's `kind` (or, for a look-alike without one, its
 * `status`) means for the job that met it. Every consumer switches on the `kind` this returns.
 */
export function classifyUpstreamFailure(error: unknown): UpstreamFailure {
  if (typeof error !== "object" || error === null) return { kind: "transient" };
  const e = error as ErrorFields;
  const message = typeof e.message === "string" ? e.message : String(error);
  const status = typeof e.status === "number" ? e.status : undefined;
  switch (kindOf(error, status)) {
    case "rate_limited": {
      const retryAfter =
        typeof e.retryAfter === "number" && e.retryAfter >= 0 ? e.retryAfter : DEFAULT_RETRY_AFTER_SECONDS;
      return { kind: "rate_limited", retryAfterSeconds: retryAfter };
    }
    case "refused":
      return refusal(e, status, message);
    case "not_found":
    case "conflict":
    case "invalid":
      if (status !== undefined)
        return { kind: "permanent", message, status, refusedFields: refusedFields(e) };
      return { kind: "permanent", message, refusedFields: [] };
    case "bad_response":
      // An answer with a status below 400 (a token answer without a token) was retried, and still is.
      return INVALID_DATA.has(e.code as string)
        ? { kind: "permanent", message, refusedFields: [] }
        : { kind: "transient" };
    default:
      break;
  }
  // Postgres refusing the content itself (which SQLSTATEs say so: unstorableReason, the rule the receiver and
  // catch-up follow too) will refuse it on every retry.
  if (unstorableReason(error)) {
    return {
      kind: "permanent",
      message: `Postgres refused the data (${e.code}): ${message}`,
      refusedFields: [],
    };
  }
  // unavailable, network, timeout, not_ready, and anything unknown: back off and retry.
  return { kind: "transient" };
}

/** The LoopsError kind, or one read from a bare `status`/`code` (an error shaped like one). */
function kindOf(error: object, status: number | undefined): LoopsErrorKind | undefined {
  if (error instanceof LoopsError) return error.kind;
  if (status !== undefined) return kindOfStatus(status);
  const code = (error as ErrorFields).code;
  if (code === "invalid_argument") return "invalid";
  return INVALID_DATA.has(code as string) ? "bad_response" : undefined;
}

/**
 * 401/403: revoke the merchant, set an extra resource aside, pause the application or the merchant's scope,
 * or fail the one call.
 */
function refusal(e: ErrorFields, status: number | undefined, message: string): UpstreamFailure {
  // merchant_revoked: catch-up's own verdict, after a backfill it ran met connection_not_active.
  if ((status === 403 && e.code === "connection_not_active") || e.code === "merchant_revoked") {
    return { kind: "revoked" };
  }
  const route = typeof e.route === "string" ? { route: e.route } : {};
  if (status === 401)
    return { kind: "paused", scope: "application", cause: "unauthorized", message, refused: true, ...route };
  const resource = status === 403 ? extraResourceOf(e.route) : undefined;
  if (resource && (e.code === "insufficient_scope" || e.code === "scope_not_granted")) {
    const scope = e.code === "insufficient_scope" ? "application" : "merchant";
    return { kind: "set_aside", scope, resource, cause: e.code, message };
  }
  if (APPLICATION_REFUSALS.has(e.code as string)) {
    return {
      kind: "paused",
      scope: "application",
      cause: e.code as PauseCause,
      message,
      refused: true,
      ...route,
    };
  }
  if (e.code === "scope_not_granted") {
    return { kind: "paused", scope: "merchant", cause: "scope_not_granted", message, ...route };
  }
  // Without a status it is a verdict of ours (catch-up's merchant_inactive), which was never classified.
  if (status === undefined) return { kind: "transient" };
  return { kind: "permanent", message, status, refusedFields: [] };
}

/** The fields a 400's field errors name. */
function refusedFields(e: ErrorFields): string[] {
  if (e.status !== 400 || !Array.isArray(e.errors)) return [];
  return e.errors.flatMap((f) => {
    const field = (f as { field?: unknown } | null)?.field;
    return typeof field === "string" ? [field] : [];
  });
}
