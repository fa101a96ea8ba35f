import { LoopsError } from "@loops-sync/loops-client";
import type { UpstreamFailure } from "@loops-sync/replica";

/** Why a catch-up, backfill or verify run for a merchant could not go on. */
export type CatchupErrorCode =
  /** The merchant revoked the connection (403 connection_not_active): no more calls are made for it. */
  | "merchant_revoked"
  /** The merchant is marked revoked in sync.merchants, so nothing is asked of the API for it. */
  | "merchant_inactive";

/**
 * The run for `merchantId` cannot go on: a `refused` LoopsError carrying `merchantId` (the CLI exits 1 for
 * it, a finding about one merchant, not 4).
 */
export function catchupError(
  code: CatchupErrorCode,
  merchantId: string,
  message: string,
  options: { cause?: unknown } = {},
): LoopsError {
  return new LoopsError({ kind: "refused", code, merchantId, message, cause: options.cause });
}

/**
 * GET /events refused the stored cursor: a 400 whose field errors name `after` (what Loops answers for an
 * event id past the 30-day retention or unknown to it), or 410 Gone. Any other 400 is a bug of ours and
 * stays an error.
 */
export function isCursorRefused(failure: UpstreamFailure): boolean {
  return (failure.kind === "permanent" && failure.status === 410) || isFieldRefused(failure, "after");
}

/** A 400 whose field errors name `field` (an `after` or page `cursor` upstream no longer accepts). */
export function isFieldRefused(failure: UpstreamFailure, field: string): boolean {
  return failure.kind === "permanent" && failure.refusedFields.includes(field);
}

/** One line for sync.cursors/sync.backfills.last_run_error and reports (client errors never carry credentials). */
export function describeError(error: unknown): string {
  const message = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
  return message.slice(0, 500);
}
