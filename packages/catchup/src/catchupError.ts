/** Why a catch-up, backfill or verify run for a merchant could not go on. */
export type CatchupErrorCode =
  /** The merchant revoked the connection (403 connection_not_active): no more calls are made for it. */
  | "merchant_revoked"
  /** The merchant is marked revoked in sync.merchants, so nothing is asked of the API for it. */
  | "merchant_inactive"
  /** GET /events refused the stored cursor (older than retention, or unknown upstream). */
  | "cursor_refused";

export class CatchupError extends Error {
  readonly code: CatchupErrorCode;
  readonly merchantId: string;
  constructor(code: CatchupErrorCode, merchantId: string, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = "CatchupError";
    this.code = code;
    this.merchantId = merchantId;
  }
}

interface UpstreamErrorFields {
  status?: unknown;
  code?: unknown;
  errors?: unknown;
}

/** 403 connection_not_active: the merchant left. */
export function isConnectionRevoked(error: unknown): boolean {
  const e = error as UpstreamErrorFields | null;
  return e?.status === 403 && e.code === "connection_not_active";
}

/**
 * The upstream refused `after`: a 400 whose field errors name `after` (what Loops answers for an event id past
 * the 30-day retention or unknown to it), or 410 Gone. Any other 400 is a bug of ours and stays an error.
 */
export function isCursorRefused(error: unknown): boolean {
  return (error as UpstreamErrorFields | null)?.status === 410 || isRefusedField(error, "after");
}

/** A 400 whose field errors name `field` (an `after` or page `cursor` upstream no longer accepts). */
export function isRefusedField(error: unknown, field: string): boolean {
  const e = error as UpstreamErrorFields | null;
  if (e?.status !== 400) return false;
  const fields = Array.isArray(e.errors) ? e.errors : [];
  return fields.some((f) => (f as { field?: unknown } | null)?.field === field);
}

/** One line for sync.cursors/sync.backfills.last_run_error and reports (client errors never carry credentials). */
export function describeError(error: unknown): string {
  const message = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
  return message.slice(0, 500);
}

/**
 * Loops refuses this application itself, for every merchant: 401 (the client has already fetched a new
 * token and retried once), 403 insufficient_scope or 403 application_suspended. Only an operator can fix
 * that (credentials, scopes, the partner account), so the CLI exits 4 instead of 1.
 */
export function isLoopsRefusal(error: unknown): boolean {
  const e = error as UpstreamErrorFields | null;
  if (e?.status === 401) return true;
  return e?.status === 403 && (e.code === "insufficient_scope" || e.code === "application_suspended");
}
