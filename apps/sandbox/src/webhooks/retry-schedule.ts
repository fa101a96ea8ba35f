const SECOND = 1000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;

/**
 * Wait before each attempt, counted after the previous attempt ended (sandbox ms). Attempt 1 is immediate;
 * after attempt 8 fails (about 21 hours in) the delivery is marked failed.
 */
export const RETRY_SCHEDULE_MS: readonly number[] = [
  0,
  10 * SECOND,
  MINUTE,
  5 * MINUTE,
  30 * MINUTE,
  2 * HOUR,
  6 * HOUR,
  12 * HOUR,
];

/** An endpoint failing without a single success for this long (sandbox ms) is disabled. */
export const DISABLE_AFTER_FAILING_MS = 3 * 24 * HOUR;

/** Real ms an endpoint has to answer before the attempt counts as failed. */
export const DEFAULT_REPLY_TIMEOUT_MS = 10 * SECOND;
