import { Command } from "commander";

export function createMigrateCommand(): Command {
  return new Command("migrate")
    .description("apply pending SQL migrations (and graphile-worker's), then exit")
    .action(async () => {
      const { openRuntime } = await import("../runtime.ts");
      const runtime = await openRuntime({ name: "migrate", allowPendingMigrations: true, poolSize: 2 });
      try {
        const { migrate } = await import("@loops-sync/db");
        const { applied } = await migrate(runtime.sql, runtime.databaseUrl);
        console.log(
          applied.length === 0 ? "migrations: up to date" : `migrations: applied ${applied.join(", ")}`,
        );
      } finally {
        await runtime.close();
      }
    });
}
