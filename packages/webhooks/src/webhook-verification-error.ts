/** Why a webhook was refused. Stable: callers and metrics switch on it. */
export type WebhookVerificationErrorCode =
  | "missing_headers"
  | "invalid_timestamp"
  | "timestamp_too_old"
  | "timestamp_too_new"
  | "invalid_signature_header"
  | "no_matching_signature"
  | "invalid_json"
  | "invalid_envelope"
  | "id_mismatch";

const STATUS: Record<WebhookVerificationErrorCode, 400 | 401> = {
  missing_headers: 401,
  invalid_timestamp: 401,
  timestamp_too_old: 401,
  timestamp_too_new: 401,
  invalid_signature_header: 401,
  no_matching_signature: 401,
  invalid_json: 400,
  invalid_envelope: 400,
  id_mismatch: 400,
};

/**
 * A webhook that is not authentic (401) or authentic but malformed (400). `detail` says what was wrong in
 * words an operator can act on; it never contains a secret or the expected signature.
 */
export class WebhookVerificationError extends Error {
  readonly code: WebhookVerificationErrorCode;
  readonly detail: string;
  /** The HTTP status a receiver should answer with: 401 for authenticity, 400 for a malformed event. */
  readonly status: 400 | 401;
  constructor(code: WebhookVerificationErrorCode, detail: string, options?: { cause?: unknown }) {
    super(`${code}: ${detail}`, options);
    this.name = "WebhookVerificationError";
    this.code = code;
    this.detail = detail;
    this.status = STATUS[code];
  }
}
