import { Command, Option } from "commander";
import { CliError, EXIT } from "../cli-error.ts";
import { parseSeconds } from "../flags.ts";
import { printJson } from "../output.ts";

interface MigrateOptions {
  plan?: boolean;
  check?: boolean;
  json?: boolean;
  maxLockWait?: number;
  migrationsDir?: string;
}

export function createMigrateCommand(): Command {
  return new Command("migrate")
    .description(
      "apply pending SQL migrations (and graphile-worker's), then exit; --plan shows what would run and its locks, --check exits 1 when something is pending",
    )
    .addOption(new Option("--plan", "print the pending steps and the lock each takes, change nothing"))
    .addOption(
      new Option("--check", "exit 0 when nothing is pending, 1 when something is; change nothing").conflicts([
        "plan",
        "maxLockWait",
      ]),
    )
    .addOption(new Option("--json", "with --plan: the plan as JSON on stdout (shape in docs/cli.md)"))
    .addOption(
      new Option(
        "--max-lock-wait <seconds>",
        "give up on a step that keeps losing its lock after this long, naming the blocking process (exit 3)",
      )
        .argParser(parseSeconds)
        .default(60)
        .conflicts("plan"),
    )
    .addOption(
      new Option(
        "--migrations-dir <path>",
        "the folder of NNNN_words.sql files to apply (default: the one this build ships; for tests and forks)",
      ),
    )
    .action(async (options: MigrateOptions) => {
      if (options.json && !options.plan) {
        throw new CliError("migrate: --json goes with --plan (migrate --plan --json)", EXIT.usage);
      }
      const { openRuntime } = await import("../runtime.ts");
      const runtime = await openRuntime({ name: "migrate", allowPendingMigrations: true, poolSize: 2 });
      try {
        const db = await import("@loops-sync/db");
        const dir = options.migrationsDir ?? db.MIGRATIONS_DIR;
        if (options.plan || options.check) {
          const plan = await db.planMigrations(runtime.sql, dir);
          const { describeMigrationPlan, describePendingFiles } = await import(
            "./describe-migration-plan.ts"
          );
          if (options.json) printJson(plan);
          else if (options.plan) for (const line of describeMigrationPlan(plan)) console.log(line);
          else if (plan.pending.length === 0) console.log("migrations: up to date");
          else {
            for (const line of describePendingFiles(plan)) console.log(line);
            throw new CliError(
              `migrate --check: ${plan.pending.length} migration(s) pending; run \`loops-sync migrate\``,
              EXIT.problem,
            );
          }
          return;
        }
        const { applied } = await db.migrate(runtime.sql, runtime.databaseUrl, dir, {
          giveUpAfterMs: (options.maxLockWait ?? 60) * 1000,
          // Progress on stderr while a long migrate runs: each online step, its own time and its tries.
          onStep: ({ migration, step, description, mode, ms, tries, batches, rows }) =>
            runtime.logger.info(
              { migration, step, description, mode, ms, tries, batches, rows },
              "migration step applied",
            ),
        });
        console.log(
          applied.length === 0 ? "migrations: up to date" : `migrations: applied ${applied.join(", ")}`,
        );
      } finally {
        await runtime.close();
      }
    });
}
