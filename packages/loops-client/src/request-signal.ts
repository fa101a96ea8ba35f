/**
 * One request's signal: aborted by the caller's signal, or with a TimeoutError (as AbortSignal.timeout's)
 * after `timeoutMs`; `done()` disarms both once the answer is read. Not AbortSignal.timeout + AbortSignal.any:
 * their timer outlives the request, the signal stays reachable while undici's abort listener is attached,
 * and each one fired `timeoutMs` after its call with a new DOMException and an abort event: CPU for nothing,
 * and a burst `timeoutMs` after a start-up catch-up (docs/decisions.md, "HTTP on undici").
 */
export function requestSignal(
  outer: AbortSignal | undefined,
  timeoutMs: number,
): { signal: AbortSignal; done(): void } {
  const controller = new AbortController();
  const onAbort = () => controller.abort(outer?.reason);
  if (outer?.aborted) controller.abort(outer.reason);
  else outer?.addEventListener("abort", onAbort, { once: true });
  const timer = setTimeout(
    () => controller.abort(new DOMException("The operation was aborted due to timeout", "TimeoutError")),
    timeoutMs,
  );
  timer.unref();
  return {
    signal: controller.signal,
    done() {
      clearTimeout(timer);
      outer?.removeEventListener("abort", onAbort);
    },
  };
}
