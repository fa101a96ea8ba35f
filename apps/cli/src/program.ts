import { version } from "@loops-sync/config/version";
import { createSandboxCommand } from "@loops-sync/sandbox/command";
import { Command, type CommanderError } from "commander";
import { createBackfillCommand } from "./commands/backfill.ts";
import { createCatchupCommand } from "./commands/catchup.ts";
import { createChangesCommand } from "./commands/changes.ts";
import { createConsumersCommand } from "./commands/consumers.ts";
import { createDemoCommand } from "./commands/demo.ts";
import { createDoctorCommand } from "./commands/doctor.ts";
import { createForwardCommand } from "./commands/forward.ts";
import { createGrantCommand } from "./commands/grant.ts";
import { createMigrateCommand } from "./commands/migrate.ts";
import { createPruneCommand } from "./commands/prune.ts";
import { createRedeliverCommand } from "./commands/redeliver.ts";
import { createRefreshCommand } from "./commands/refresh.ts";
import { createReplayCommand } from "./commands/replay.ts";
import { createReceiverCommand, createStartCommand, createWorkerCommand } from "./commands/serve.ts";
import { createStatusCommand } from "./commands/status.ts";
import { createVerifyCommand } from "./commands/verify.ts";

const EXIT_CODES_HELP = `
Exit codes:
  0    success
  1    the command ran and found a problem (differences, failures)
  2    bad flag, argument or environment variable
  3    Postgres unreachable or not starting, or a migration refused
  4    the Loops API unreachable or refusing us
  130  interrupted (Ctrl-C)`;

/** The `loops-sync` command tree. */
export function createProgram(): Command {
  const program = new Command("loops-sync")
    .description(
      "Keeps a local Postgres replica of your Loops merchants' orders, fed by signed webhooks and repaired by polling.",
    )
    .version(version, "-V, --version", "print the version")
    .showHelpAfterError("(add --help for usage)")
    .showSuggestionAfterError(true)
    // afterAll: every subcommand's --help ends with the same table.
    .addHelpText("afterAll", EXIT_CODES_HELP)
    .configureHelp({ sortSubcommands: false });
  for (const command of [
    createMigrateCommand(),
    createReceiverCommand(),
    createWorkerCommand(),
    createStartCommand(),
    createCatchupCommand(),
    createBackfillCommand(),
    createStatusCommand(),
    createChangesCommand(),
    createConsumersCommand(),
    createReplayCommand(),
    createRedeliverCommand(),
    createVerifyCommand(),
    createRefreshCommand(),
    createPruneCommand(),
    createForwardCommand(),
    createGrantCommand(),
    createDoctorCommand(),
    createSandboxCommand(),
    createDemoCommand(),
  ]) {
    program.addCommand(command);
  }
  return program;
}

/** Applies exitOverride to every command so usage errors become exit code 2 instead of process.exit(1). */
export function throwOnUsageErrors(command: Command): void {
  command.exitOverride((error: CommanderError) => {
    throw error;
  });
  for (const sub of command.commands) throwOnUsageErrors(sub);
}
