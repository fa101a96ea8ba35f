import { LoopsApiError, LoopsNetworkError, LoopsResponseError, LoopsTimeoutError } from "./errors.ts";

/**
 * Maps what fetch threw to the client's error types: our own errors pass through, the timeout
 * signal becomes LoopsTimeoutError, a caller's abort stays an AbortError (the caller asked for it),
 * and anything else (refused, reset, DNS) becomes LoopsNetworkError with the original as cause.
 */
export function classifyFetchError(
  error: unknown,
  method: string,
  route: string,
  timeoutMs: number,
): unknown {
  if (
    error instanceof LoopsApiError ||
    error instanceof LoopsNetworkError ||
    error instanceof LoopsTimeoutError ||
    error instanceof LoopsResponseError
  ) {
    return error;
  }
  if (error instanceof Error && error.name === "TimeoutError")
    return new LoopsTimeoutError(method, route, timeoutMs, { cause: error });
  if (error instanceof Error && error.name === "AbortError") return error;
  return new LoopsNetworkError(method, route, { cause: error });
}
