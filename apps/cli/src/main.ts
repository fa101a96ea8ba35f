// Entry point of the `loops-sync` command (run directly by Node 24; see bin/loops-sync).
import { CommanderError } from "commander";
import { EXIT } from "./cli-error.ts";
import { loadDotEnv } from "./dotenv.ts";
import { exitQuietlyOnClosedPipe } from "./output.ts";
import { createProgram, throwOnUsageErrors } from "./program.ts";

exitQuietlyOnClosedPipe();
const program = createProgram();
throwOnUsageErrors(program);

try {
  loadDotEnv();
  await program.parseAsync(process.argv);
} catch (error) {
  if (error instanceof CommanderError) {
    // Commander already printed the message (naming the flag) and the hint; help and version exit 0.
    const ok =
      error.code === "commander.helpDisplayed" ||
      error.code === "commander.version" ||
      error.code === "commander.help";
    process.exitCode = ok ? EXIT.ok : EXIT.usage;
  } else {
    const { describeFailure } = await import("./describe-failure.ts");
    const { line, exitCode } = describeFailure(error);
    process.stderr.write(`loops-sync: ${line}\n`);
    process.exitCode = exitCode;
  }
}
