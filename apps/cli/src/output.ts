import { CliError, EXIT } from "./cli-error.ts";

/** `--json`: the command's result on stdout as one JSON document (fields are only ever added). */
export function printJson(value: unknown): void {
  process.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
}

/** The flag every operator verb takes for a machine-readable result. */
export const JSON_FLAG_HELP = "print the result as JSON on stdout (shape in docs/operations.md)";

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
