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

/** One field problem reported by the API in a problem+json `errors` array. */
export interface LoopsFieldError {
  field: string;
  message: string;
}

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

/** An HTTP error answer from Loops (problem+json parsed into fields). Never carries credentials. */
export class LoopsApiError extends Error {
  readonly status: number;
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
  /** True for 429 and 5xx: the same call may succeed later. */
  readonly retryable: boolean;

  constructor(init: LoopsApiErrorInit) {
    const detail = init.detail ? `: ${init.detail}` : "";
    const wait = init.retryAfter !== undefined ? ` (retry after ${init.retryAfter} s)` : "";
    const req = init.requestId ? ` [${init.requestId}]` : "";
    super(
      `Loops ${init.method} ${init.route} failed with ${init.status} ${init.code}${detail}${wait}${req}`,
      {
        cause: init.cause,
      },
    );
    this.name = "LoopsApiError";
    this.status = init.status;
    this.code = init.code;
    this.title = init.title;
    this.detail = init.detail;
    this.type = init.type;
    this.requestId = init.requestId;
    this.existingId = init.existingId;
    this.errors = init.errors ?? [];
    this.retryAfter = init.retryAfter;
    this.method = init.method;
    this.route = init.route;
    this.retryable = init.status === 429 || init.status >= 500;
  }
}

/** The connection failed (refused, reset, DNS) before an answer arrived. Safe to retry later. */
export class LoopsNetworkError extends Error {
  readonly code = "network_error";
  readonly retryable = true;
  readonly method: string;
  readonly route: string;
  constructor(method: string, route: string, options: { cause?: unknown } = {}) {
    const reason = describeCause(options.cause);
    super(`Loops ${method} ${route}: network error${reason ? ` (${reason})` : ""}`, options);
    this.name = "LoopsNetworkError";
    this.method = method;
    this.route = route;
  }
}

/** No complete answer within the per-request timeout. Safe to retry later. */
export class LoopsTimeoutError extends Error {
  readonly code = "timeout";
  readonly retryable = true;
  readonly method: string;
  readonly route: string;
  readonly timeoutMs: number;
  constructor(method: string, route: string, timeoutMs: number, options: { cause?: unknown } = {}) {
    super(`Loops ${method} ${route}: no answer within ${timeoutMs} ms`, options);
    this.name = "LoopsTimeoutError";
    this.method = method;
    this.route = route;
    this.timeoutMs = timeoutMs;
  }
}

/** A request argument failed local validation before anything was sent; `field` names it. */
export class LoopsValidationError extends Error {
  readonly code = "invalid_argument";
  readonly retryable = false;
  /** Dotted path of the offending field, e.g. `products[2].price.amount`; "" for the whole value. */
  readonly field: string;
  constructor(field: string, message: string) {
    super(field ? `${field}: ${message}` : message);
    this.name = "LoopsValidationError";
    this.field = field;
  }
}

/** A 2xx answer whose body does not have the shape the spec promises (a required field missing). */
export class LoopsResponseError extends Error {
  readonly code = "invalid_response";
  readonly retryable = false;
  readonly method: string;
  readonly route: string;
  readonly field: string;
  constructor(
    method: string,
    route: string,
    field: string,
    message: string,
    options: { cause?: unknown } = {},
  ) {
    super(`Loops ${method} ${route} answered an unexpected body: ${field || "(body)"}: ${message}`, options);
    this.name = "LoopsResponseError";
    this.method = method;
    this.route = route;
    this.field = field;
  }
}

function describeCause(cause: unknown): string {
  if (!(cause instanceof Error)) return "";
  const inner = cause.cause;
  if (inner && typeof inner === "object" && "code" in inner && typeof inner.code === "string") {
    return inner.code;
  }
  return cause.message;
}
