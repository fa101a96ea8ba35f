/** The first retry waits about this long. */
export const DEFAULT_RETRY_BASE_MS = 1000;
/** No retry waits longer than this. */
export const DEFAULT_RETRY_CAP_MS = 5 * 60_000;

/**
 * How long to wait before the next attempt after `attempts` failed ones: doubling from `baseMs` up to `capMs`,
 * each wait drawn between half and all of it, so changes that failed together (an outage) do not all come back
 * in the same instant.
 */
export function retryDelayMs(
  attempts: number,
  { baseMs = DEFAULT_RETRY_BASE_MS, capMs = DEFAULT_RETRY_CAP_MS, random = Math.random } = {},
): number {
  const ceiling = Math.min(capMs, baseMs * 2 ** Math.min(30, Math.max(0, attempts - 1)));
  return Math.round(ceiling / 2 + random() * (ceiling / 2));
}
