// Loaded only when a command fails: the error classes it tells apart come with their packages, which a
// `--help`, `--version` or usage error never needs.
import { ConfigError } from "@loops-sync/config";
import { isDbError } from "@loops-sync/db";
import { LoopsError } from "@loops-sync/loops-client";
import { CliError, EXIT, type ExitCode } from "./cli-error.ts";

const CONNECTION_CODES = new Set([
  "ECONNREFUSED",
  "ENOTFOUND",
  "ETIMEDOUT",
  "CONNECT_TIMEOUT",
  "EHOSTUNREACH",
  "57P03",
]);

/** Maps any error to the one line and exit code the operator sees. */
export function describeFailure(error: unknown): { line: string; exitCode: ExitCode } {
  if (error instanceof CliError) return { line: error.message, exitCode: error.exitCode };
  if (error instanceof ConfigError) return { line: error.message, exitCode: EXIT.usage };
  // grant named a role that does not exist or cannot be narrowed, or runs as the wrong role: fix the input.
  if (isDbError(error, "role")) return { line: error.message, exitCode: EXIT.usage };
  if (isDbError(error, "migration") || isDbError(error, "embedded")) {
    return { line: error.message, exitCode: EXIT.database };
  }
  const e = error as { code?: string; name?: string; message?: string; status?: number };
  if (e?.code && CONNECTION_CODES.has(e.code)) {
    return {
      line: `cannot reach Postgres (${e.code}); check DATABASE_URL and that the server is running`,
      exitCode: EXIT.database,
    };
  }
  // read_only_sql_transaction: a write met a standby (or a read-only role) after the runtime's check, e.g. one
  // promoted or demoted meanwhile. Our SQL functions' refusals already name the primary; Postgres' own do not.
  if (e?.code === "25006") {
    const line = e.message?.includes("primary")
      ? e.message
      : `Postgres refused a write (${e.message ?? "read-only transaction"}): DATABASE_URL reaches a read-only database, such as a standby; run this against the primary`;
    return { line, exitCode: EXIT.database };
  }
  if (error instanceof LoopsError) {
    // A verdict about one merchant (catch-up's: revoked) is a finding; anything else is Loops failing us.
    // So is an order the replica cannot store (Loops answered, the data is what it is).
    if (error.merchantId !== undefined || error.code === "invalid_order") {
      return { line: error.message, exitCode: EXIT.problem };
    }
    return { line: `Loops API: ${error.message}`, exitCode: EXIT.upstream };
  }
  return { line: e?.message ?? String(error), exitCode: EXIT.problem };
}
