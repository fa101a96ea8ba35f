/** Why Postgres can never store some data: SQLSTATE class 22 or 54. */
export type UnstorableReason = "data_exception" | "program_limit";

const SQLSTATE = /^[0-9A-Z]{5}$/;

/**
 * Whether a failed store is about the content (the same data fails the same way on every retry) or
 * transient: the one rule, for the receiver, catch-up and the worker alike (the worker fails such data
 * instead of retrying it: classifyUpstreamFailure in @loops-sync/replica calls this). Only Postgres's own
 * errors are read: SQLSTATE class 22 (data exception: `\u0000`, a lone surrogate, a number out of range)
 * and class 54 (program limit: index row size, stack depth, statement too complex) are content; everything
 * else (connection loss, class 53 insufficient resources, 57P01 admin shutdown, 57014 statement timeout,
 * 40001/40P01 serialization and deadlock, 55P03 lock not available, a schema not yet migrated) can succeed
 * when retried. Returns the unstorable reason, or undefined.
 */
export function unstorableReason(error: unknown): UnstorableReason | undefined {
  if (typeof error !== "object" || error === null) return undefined;
  const { name, code } = error as { name?: unknown; code?: unknown };
  if (name !== "PostgresError" || typeof code !== "string" || !SQLSTATE.test(code)) return undefined;
  if (code.startsWith("22")) return "data_exception";
  if (code.startsWith("54")) return "program_limit";
  return undefined;
}
