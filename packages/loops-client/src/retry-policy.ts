import { backoffMs } from "./backoff.ts";

/** How the client retries a failed call. */
export interface RetryOptions {
  /** Total tries of one call, the first included (a 401 refresh does not count). Default 4. */
  maxAttempts?: number;
  /** First backoff step for 5xx, resets and timeouts. Default 200 ms. */
  baseDelayMs?: number;
  /** Upper bound of any single backoff. Default 5000 ms. */
  maxDelayMs?: number;
  /**
   * A 429 asking to wait longer than this is thrown at once (a `rate_limited` LoopsError with `retryAfter`)
   * so a job can be rescheduled instead of holding a worker. Default 30 s.
   */
  maxRetryAfterSeconds?: number;
}

export type RetryPolicy = Required<RetryOptions>;

export function resolveRetryPolicy({
  maxAttempts = 4,
  baseDelayMs = 200,
  maxDelayMs = 5_000,
  maxRetryAfterSeconds = 30,
}: RetryOptions = {}): RetryPolicy {
  if (!Number.isInteger(maxAttempts) || maxAttempts < 1) {
    throw new RangeError(`retry.maxAttempts must be a whole number >= 1, got ${maxAttempts}`);
  }
  for (const [name, value] of [
    ["baseDelayMs", baseDelayMs],
    ["maxDelayMs", maxDelayMs],
    ["maxRetryAfterSeconds", maxRetryAfterSeconds],
  ] as const) {
    if (!Number.isFinite(value) || value < 0)
      throw new RangeError(`retry.${name} must be >= 0, got ${value}`);
  }
  return { maxAttempts, baseDelayMs, maxDelayMs, maxRetryAfterSeconds };
}

/** The policy's wait before retry `retryIndex` (0 before the second attempt), jittered (backoff.ts). */
export function backoffDelayMs(
  retryIndex: number,
  policy: RetryPolicy,
  random: () => number = Math.random,
): number {
  return backoffMs(retryIndex, { baseMs: policy.baseDelayMs, capMs: policy.maxDelayMs }, random);
}

/**
 * Retry-After as seconds (RFC 9110: delay-seconds or an HTTP date). Undefined when absent or unreadable.
 * Fractions round up so we never come back early.
 */
export function parseRetryAfter(value: string | null, now: number = Date.now()): number | undefined {
  if (value === null) return undefined;
  const trimmed = value.trim();
  if (/^\d+(\.\d+)?$/.test(trimmed)) return Math.ceil(Number(trimmed));
  // An HTTP date always names a day or month; without letters, Date.parse would accept "-3" as a year.
  if (!/[a-z]/i.test(trimmed)) return undefined;
  const at = Date.parse(trimmed);
  if (Number.isNaN(at)) return undefined;
  return Math.max(0, Math.ceil((at - now) / 1000));
}

/** Waits `ms`, or rejects early with the signal's reason. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}
