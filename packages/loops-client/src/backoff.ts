/** How waits grow between tries. */
export interface Backoff {
  /** The first wait, ms. */
  baseMs: number;
  /** No wait is longer, ms. */
  capMs: number;
  /**
   * Draw each wait between half and all of it ("equal jitter"): half is fixed, so a retry never fires at
   * once; half is random, so callers that failed together (an outage) do not all come back in one instant.
   * Default true. Off where a few connections of one process wait for Postgres to come back.
   */
  jitter?: boolean;
}

/**
 * The wait before retry `index` (0 before the second try): doubling from `baseMs` up to `capMs`. The one
 * backoff of the workspace: the API client's retries, forwarding's, and the waits for Postgres of the job
 * queue. (The feed reader of `@loops-sync/schema` keeps its own doubling: it ships to partners alone.)
 */
export function backoffMs(
  index: number,
  { baseMs, capMs, jitter = true }: Backoff,
  random: () => number = Math.random,
): number {
  const step = Math.min(capMs, baseMs * 2 ** Math.min(30, Math.max(0, index)));
  return jitter ? Math.round(step / 2 + random() * (step / 2)) : step;
}
