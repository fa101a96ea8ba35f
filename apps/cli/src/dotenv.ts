import { CliError, EXIT } from "./cli-error.ts";

/**
 * Reads `.env` from the working directory into process.env when the file exists (Node's own parser).
 * Variables already set in the environment win, so a deployment's settings override the file.
 */
export function loadDotEnv(file = ".env"): void {
  try {
    process.loadEnvFile(file);
  } catch (error) {
    if ((error as { code?: string }).code === "ENOENT") return;
    throw new CliError(
      `${file}: cannot be read (${(error as Error).message}); fix or remove the file`,
      EXIT.usage,
      { cause: error },
    );
  }
}
