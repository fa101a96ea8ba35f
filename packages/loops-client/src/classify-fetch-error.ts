import { LoopsError } from "./errors.ts";

/**
 * Maps what fetch threw to the client's error types: our own errors pass through, the timeout
 * signal becomes a `timeout` LoopsError, a caller's abort stays an AbortError (the caller asked for it),
 * and anything else (refused, reset, DNS) becomes a `network` one with the original as cause.
 */
export function classifyFetchError(
  error: unknown,
  method: string,
  route: string,
  timeoutMs: number,
): unknown {
  if (error instanceof LoopsError) return error;
  if (error instanceof Error && error.name === "TimeoutError")
    return LoopsError.timeout(method, route, timeoutMs, error);
  if (error instanceof Error && error.name === "AbortError") return error;
  return LoopsError.network(method, route, error);
}
