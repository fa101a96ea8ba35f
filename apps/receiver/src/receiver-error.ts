import type { UnstorableReason } from "@loops-sync/webhooks";

/** Why the receiver did not take a webhook in; each is its answer's problem+json `code`. */
export type ReceiverErrorCode =
  /** The body grew past RECEIVER_MAX_BODY_BYTES while streaming: 413, and the connection is closed. */
  | "payload_too_large"
  /** Postgres could not store the event: 503, a retry can succeed. */
  | "database_unavailable"
  /** No commit within the store timeout: 503. */
  | "store_timeout"
  /** Postgres can never store this content: 422. */
  | "unstorable_event";

const STATUS: Record<ReceiverErrorCode, 413 | 422 | 503> = {
  payload_too_large: 413,
  database_unavailable: 503,
  store_timeout: 503,
  unstorable_event: 422,
};

/**
 * A webhook the receiver did not store, with the HTTP status to answer. Its message is for logs; answers
 * carry a fixed detail per code.
 */
export class ReceiverError extends Error {
  readonly code: ReceiverErrorCode;
  readonly status: 413 | 422 | 503;
  /** For unstorable_event: why (a bounded set, used as a metric label). */
  readonly reason: UnstorableReason | undefined;
  constructor(
    code: ReceiverErrorCode,
    message: string,
    options?: { cause?: unknown; reason?: UnstorableReason },
  ) {
    super(message, options);
    this.name = "ReceiverError";
    this.code = code;
    this.status = STATUS[code];
    this.reason = options?.reason;
  }
}
