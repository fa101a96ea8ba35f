/** Titles by code, as shown in problem+json bodies. */
const TITLES: Record<string, string> = {
  invalid_request: "The request is invalid",
  invalid_file: "The file is invalid",
  merchant_required: "Service-Merchant-Id is required",
  unauthorized: "Unauthorized",
  insufficient_scope: "The application is not approved for this scope",
  scope_not_granted: "The merchant did not grant this scope",
  connection_not_active: "The merchant's connection is not active",
  application_suspended: "The application is suspended",
  channel_not_permitted: "The channel is not permitted",
  not_found: "Not found",
  merchant_not_found: "Merchant not found",
  merchant_exists: "The merchant already exists",
  external_ref_conflict: "external_ref is already used",
  business_profile_locked: "The business profile is locked",
  idempotency_key_reused: "The idempotency key was used with a different request",
  rate_limited: "Too many requests",
  upstream_unavailable: "The service is temporarily unavailable",
};

export interface FieldError {
  field: string;
  message: string;
}

export interface ProblemOptions {
  detail?: string;
  errors?: FieldError[];
  existingId?: string;
  headers?: Record<string, string>;
  cause?: unknown;
}

/**
 * An API refusal; rendered as application/problem+json by the app's error handler. Also the sandbox's one
 * error elsewhere: `invalid_seed` (a seed file unreadable or invalid) and `unknown_after` (an event cursor
 * naming no retained event, which the events route turns into its 400).
 */
export class ProblemError extends Error {
  readonly status: number;
  readonly code: string;
  readonly detail: string | undefined;
  readonly errors: FieldError[] | undefined;
  readonly existingId: string | undefined;
  readonly headers: Record<string, string>;

  constructor(
    status: number,
    code: string,
    { detail, errors, existingId, headers = {}, cause }: ProblemOptions = {},
  ) {
    super(detail ? `${code}: ${detail}` : code, { cause });
    this.name = "ProblemError";
    this.status = status;
    this.code = code;
    this.detail = detail;
    this.errors = errors;
    this.existingId = existingId;
    this.headers = headers;
  }

  title(): string {
    return TITLES[this.code] ?? this.code;
  }
}

export const notFound = (what: string): ProblemError =>
  new ProblemError(404, "not_found", {
    detail: `${what} does not exist or is not accessible with this connection`,
  });

export const invalidRequest = (errors: FieldError[], detail?: string): ProblemError =>
  new ProblemError(400, "invalid_request", {
    detail: detail ?? errors.map((e) => `${e.field}: ${e.message}`).join("; "),
    errors,
  });
