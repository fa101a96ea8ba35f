/** Why a webhook was refused, or (`invalid_secret`) a signing secret was. Stable: callers and metrics switch on it. */
export type WebhookErrorCode =
  | "missing_headers"
  | "invalid_timestamp"
  | "timestamp_too_old"
  | "timestamp_too_new"
  | "invalid_signature_header"
  | "no_matching_signature"
  | "invalid_json"
  | "invalid_envelope"
  | "id_mismatch"
  | "unstorable_event"
  /** A signing secret that cannot be decoded (at start, not per delivery); the message never repeats it. */
  | "invalid_secret";

/** Why an authentic, well-formed event cannot be stored (a bounded set: it is a metric label). */
export type UnstorableReason = "field_too_long" | "json_too_deep" | "data_exception" | "program_limit";

const STATUS: Record<WebhookErrorCode, 400 | 401 | 422 | 500> = {
  missing_headers: 401,
  invalid_timestamp: 401,
  timestamp_too_old: 401,
  timestamp_too_new: 401,
  invalid_signature_header: 401,
  no_matching_signature: 401,
  invalid_json: 400,
  invalid_envelope: 400,
  id_mismatch: 400,
  unstorable_event: 422,
  // Our own configuration, never a delivery's fault.
  invalid_secret: 500,
};

/**
 * A webhook that is not authentic (401), authentic but malformed (400), or well-formed but past what the
 * inbox can store (422 `unstorable_event`, with a `reason`); or a signing secret that cannot be decoded
 * (`invalid_secret`). `detail` says what was wrong in words an operator can act on; it never contains a
 * secret or the expected signature.
 */
export class WebhookError extends Error {
  readonly code: WebhookErrorCode;
  readonly detail: string;
  /** The HTTP status a receiver should answer with: 401 for authenticity, 400 malformed, 422 unstorable. */
  readonly status: 400 | 401 | 422 | 500;
  /** For `unstorable_event`: which bound it passed. */
  readonly reason: UnstorableReason | undefined;
  constructor(
    code: WebhookErrorCode,
    detail: string,
    options?: { cause?: unknown; reason?: UnstorableReason },
  ) {
    // A secret's message is the one line an operator sees at start, as it always was.
    super(code === "invalid_secret" ? detail : `${code}: ${detail}`, options);
    this.reason = options?.reason;
    this.name = "WebhookError";
    this.code = code;
    this.detail = detail;
    this.status = STATUS[code];
  }
}
