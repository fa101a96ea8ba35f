/** The spec's stable machine-readable error codes; upstream may add more, so any string is kept. */
export type LoopsErrorCode =
  | "invalid_request"
  | "invalid_file"
  | "merchant_required"
  | "unauthorized"
  | "insufficient_scope"
  | "scope_not_granted"
  | "connection_not_active"
  | "application_suspended"
  | "channel_not_permitted"
  | "not_found"
  | "merchant_not_found"
  | "merchant_exists"
  | "external_ref_conflict"
  | "business_profile_locked"
  | "idempotency_key_reused"
  | "rate_limited"
  | "upstream_unavailable"
  | (string & {});

/**
 * What went wrong talking to Loops, as a closed set. What each kind means for a job (retry, pause, revoke,
 * fail) is decided in one place: `classifyUpstreamFailure` (@loops-sync/replica).
 * - `refused`: 401/403, Loops refuses the application or this merchant (`code` says which).
 * - `rate_limited`: 429; `retryAfter` says how long to wait.
 * - `unavailable`: 408 or 5xx; the same call may succeed later.
 * - `not_found`: 404 or 410.
 * - `conflict`: 409 (`existingId` names what is already there).
 * - `invalid`: any other 4xx, or an argument refused locally before sending (`status` undefined, `field`).
 * - `network`: the connection failed (refused, reset, DNS) before an answer arrived.
 * - `timeout`: no complete answer within the per-request timeout.
 * - `bad_response`: an answer that breaks the spec (a field missing, another order than asked for).
 * - `not_ready`: a valid answer that is behind what an event announced; it catches up later.
 */
export type LoopsErrorKind =
  | "refused"
  | "rate_limited"
  | "unavailable"
  | "not_found"
  | "conflict"
  | "invalid"
  | "network"
  | "timeout"
  | "bad_response"
  | "not_ready";

/** One field problem reported by the API in a problem+json `errors` array. */
export interface LoopsFieldError {
  field: string;
  message: string;
}

/** An HTTP error answer, as problem+json carries it. */
export interface LoopsApiErrorInit {
  status: number;
  code: LoopsErrorCode;
  title: string;
  detail?: string | undefined;
  type?: string | undefined;
  requestId?: string | undefined;
  existingId?: string | undefined;
  errors?: LoopsFieldError[] | undefined;
  /** Seconds to wait before retrying, from the Retry-After header. */
  retryAfter?: number | undefined;
  method: string;
  route: string;
  cause?: unknown;
}

/** Every field of a LoopsError; the static constructors below fill them for each kind. */
export interface LoopsErrorInit extends Partial<Omit<LoopsApiErrorInit, "cause">> {
  kind: LoopsErrorKind;
  code: LoopsErrorCode;
  message: string;
  field?: string | undefined;
  timeoutMs?: number | undefined;
  /** The merchant a catch-up run was for, when the error ends it. */
  merchantId?: string | undefined;
  orderId?: string | undefined;
  cause?: unknown;
}

const RETRYABLE: ReadonlySet<LoopsErrorKind> = new Set(["rate_limited", "unavailable", "network", "timeout"]);

/** The one error of talking to Loops, with a `kind` to switch on. Never carries credentials. */
export class LoopsError extends Error {
  readonly kind: LoopsErrorKind;
  /** HTTP status of the answer, if there was one. */
  readonly status: number | undefined;
  readonly code: LoopsErrorCode;
  readonly title: string;
  readonly detail: string | undefined;
  readonly type: string | undefined;
  readonly requestId: string | undefined;
  readonly existingId: string | undefined;
  readonly errors: LoopsFieldError[];
  readonly retryAfter: number | undefined;
  readonly method: string;
  readonly route: string;
  /** Dotted path of the offending field, e.g. `products[2].price.amount`; "" for the whole value. */
  readonly field: string;
  readonly timeoutMs: number | undefined;
  readonly merchantId: string | undefined;
  readonly orderId: string | undefined;
  /** True for 429, 5xx, network and timeout: the same call may succeed later. */
  readonly retryable: boolean;

  constructor(init: LoopsErrorInit) {
    super(init.message, { cause: init.cause });
    this.name = "LoopsError";
    this.kind = init.kind;
    this.status = init.status;
    this.code = init.code;
    this.title = init.title ?? init.code;
    this.detail = init.detail;
    this.type = init.type;
    this.requestId = init.requestId;
    this.existingId = init.existingId;
    this.errors = init.errors ?? [];
    this.retryAfter = init.retryAfter;
    this.method = init.method ?? "";
    this.route = init.route ?? "";
    this.field = init.field ?? "";
    this.timeoutMs = init.timeoutMs;
    this.merchantId = init.merchantId;
    this.orderId = init.orderId;
    this.retryable = RETRYABLE.has(init.kind);
  }

  /** An HTTP error answer from Loops (problem+json parsed into fields). */
  static fromAnswer(init: LoopsApiErrorInit): LoopsError {
    const detail = init.detail ? `: ${init.detail}` : "";
    const wait = init.retryAfter !== undefined ? ` (retry after ${init.retryAfter} s)` : "";
    const req = init.requestId ? ` [${init.requestId}]` : "";
    const message = `Loops ${init.method} ${init.route} failed with ${init.status} ${init.code}${detail}${wait}${req}`;
    return new LoopsError({ ...init, kind: kindOfStatus(init.status), message });
  }

  /** The connection failed (refused, reset, DNS) before an answer arrived. */
  static network(method: string, route: string, cause?: unknown): LoopsError {
    const reason = describeCause(cause);
    const message = `Loops ${method} ${route}: network error${reason ? ` (${reason})` : ""}`;
    return new LoopsError({ kind: "network", code: "network_error", message, method, route, cause });
  }

  /** No complete answer within the per-request timeout. */
  static timeout(method: string, route: string, timeoutMs: number, cause?: unknown): LoopsError {
    const message = `Loops ${method} ${route}: no answer within ${timeoutMs} ms`;
    return new LoopsError({ kind: "timeout", code: "timeout", message, method, route, timeoutMs, cause });
  }

  /** A request argument failed local validation before anything was sent; `field` names it. */
  static invalidArgument(field: string, message: string): LoopsError {
    return new LoopsError({
      kind: "invalid",
      code: "invalid_argument",
      message: field ? `${field}: ${message}` : message,
      field,
    });
  }

  /** A 2xx answer whose body does not have the shape the spec promises (a required field missing). */
  static badResponse(
    method: string,
    route: string,
    field: string,
    problem: string,
    cause?: unknown,
  ): LoopsError {
    const message = `Loops ${method} ${route} answered an unexpected body: ${field || "(body)"}: ${problem}`;
    return new LoopsError({
      kind: "bad_response",
      code: "invalid_response",
      message,
      method,
      route,
      field,
      cause,
    });
  }
}

/** The kind of an HTTP error answer, by its status alone. */
export function kindOfStatus(status: number): LoopsErrorKind {
  // Below 400 only for an answer that was "ok" but unusable (a token answer without a token).
  if (status < 400) return "bad_response";
  if (status === 401 || status === 403) return "refused";
  if (status === 404 || status === 410) return "not_found";
  if (status === 409) return "conflict";
  if (status === 429) return "rate_limited";
  if (status === 408 || status >= 500) return "unavailable";
  return "invalid";
}

/** True when `error` is a LoopsError of one of `kinds`. */
export function isLoopsError(error: unknown, ...kinds: LoopsErrorKind[]): error is LoopsError {
  return error instanceof LoopsError && (kinds.length === 0 || kinds.includes(error.kind));
}

function describeCause(cause: unknown): string {
  if (!(cause instanceof Error)) return "";
  const inner = cause.cause;
  if (inner && typeof inner === "object" && "code" in inner && typeof inner.code === "string") {
    return inner.code;
  }
  return cause.message;
}
