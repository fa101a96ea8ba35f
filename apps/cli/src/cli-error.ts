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
