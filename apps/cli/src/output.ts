import { CliError, EXIT } from "./cli-error.ts";

/** `--json`: the command's result on stdout as one JSON document (fields are only ever added). */
export function printJson(value: unknown): void {
  process.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
}

/**
 * A reader that went away (`loops-sync … | head -1`) ends the command quietly, with the exit code it has so
 * far (0 unless it already found a problem), as SIGPIPE ends `cat`: Node ignores SIGPIPE, so without this a
 * write to the closed pipe is an unhandled 'error' event and a stack trace. Any other write error still throws.
 */
export function exitQuietlyOnClosedPipe(): void {
  for (const stream of [process.stdout, process.stderr]) {
    stream.on("error", (error: NodeJS.ErrnoException) => {
      if (error.code !== "EPIPE") throw error;
      process.exit(process.exitCode ?? EXIT.ok);
    });
  }
}

/** The flag every operator verb takes for a machine-readable result. */
export const JSON_FLAG_HELP = "print the result as JSON on stdout (shape in docs/cli.md)";

/** Exit 4 when Loops refused the application for any merchant: only the operator can fix that. */
export function throwIfRefused(
  verb: string,
  merchants: readonly { merchantId: string; refused: boolean; error: string | undefined }[],
): void {
  const refused = merchants.filter((m) => m.refused);
  if (refused.length === 0) return;
  throw new CliError(
    `${verb}: Loops refused us (${refused[0]!.error}); check LOOPS_CLIENT_ID/LOOPS_CLIENT_SECRET, the application's scopes and that it is not suspended`,
    EXIT.upstream,
  );
}
