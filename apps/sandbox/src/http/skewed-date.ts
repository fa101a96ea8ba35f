import type { MiddlewareHandler } from "hono";
import type { FaultInjector } from "../faults.ts";

/**
 * The `Date` header of every answer, shifted by the `clockSkewSeconds` fault. Without the fault Node's own
 * header (the real time) stays: a client reads Loops' clock from it, as `loops-sync doctor` does.
 */
export function skewedDate({ faults }: { faults: FaultInjector }): MiddlewareHandler {
  return async function skewedDateHeader(c, next) {
    await next();
    const skew = faults.get().clockSkewSeconds;
    if (skew !== 0) c.header("date", new Date(Date.now() + skew * 1000).toUTCString());
  };
}
