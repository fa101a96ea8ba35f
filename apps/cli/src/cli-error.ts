import { ConfigError } from "@loops-sync/config";
import { isDbError } from "@loops-sync/db";
import { LoopsError } from "@loops-sync/loops-client";

/** Exit codes of `loops-sync`, documented in the README. */
export const EXIT = {
  ok: 0,
  /** The command ran and found a problem (verify found differences, catch-up had failures). */
  problem: 1,
  /** Bad flag, argument or environment variable. */
  usage: 2,
  /** Postgres unreachable, or a migration refused. */
  database: 3,
  /** The Loops API (or sandbox) unreachable or refusing us. */
  upstream: 4,
  /** Stopped by Ctrl-C. */
  interrupted: 130,
} as const;

export type ExitCode = (typeof EXIT)[keyof typeof EXIT];

/** An error that ends the command with one line on stderr and a chosen exit code. */
export class CliError extends Error {
  readonly exitCode: ExitCode;
  constructor(message: string, exitCode: ExitCode, options?: { cause?: unknown }) {
    super(message, options);
    this.name = "CliError";
    this.exitCode = exitCode;
  }
}

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
