import { createLogger, type Env, type Logger, loadEnv, type RequiredVariable } from "@loops-sync/config";
import { connect, describeConnectionError, migrate, resolveDatabase, type Sql } from "@loops-sync/db";
import { CliError, EXIT } from "./cli-error.ts";

export interface Runtime {
  env: Env;
  logger: Logger;
  sql: Sql;
  databaseUrl: string;
  close(): Promise<void>;
}

export interface OpenRuntimeOptions {
  /** Component name for log lines. */
  name: string;
  /** Variables this command cannot run without. Default: none. */
  require?: readonly RequiredVariable[];
  /** Apply migrations before returning. Default: LOOPS_SYNC_MIGRATE_ON_START. */
  migrate?: boolean;
  /** Pool size. Default: DATABASE_POOL_SIZE. */
  poolSize?: number;
  /** Environment to read. Default: process.env. */
  source?: NodeJS.ProcessEnv;
}

/** Reads the environment, reaches Postgres (or starts the embedded one) and migrates when asked. */
export async function openRuntime({
  name,
  require = [],
  migrate: runMigrations,
  poolSize,
  source,
}: OpenRuntimeOptions): Promise<Runtime> {
  const env = loadEnv(source, { require });
  const logger = createLogger({ name, level: env.LOG_LEVEL });
  const database = await resolveDatabase(env, logger);
  const sql = connect(database.url, {
    max: poolSize ?? env.DATABASE_POOL_SIZE,
    applicationName: `loops-sync ${name}`,
  });
  const close = async () => {
    await sql.end({ timeout: 5 });
    await database.stop();
  };
  try {
    await sql`select 1`;
  } catch (error) {
    await close().catch(() => {});
    throw new CliError(describeConnectionError(error, database.url), EXIT.database, { cause: error });
  }
  if (runMigrations ?? env.LOOPS_SYNC_MIGRATE_ON_START) {
    try {
      const { applied } = await migrate(sql, database.url);
      if (applied.length > 0) logger.info({ applied }, "migrations applied");
    } catch (error) {
      await close().catch(() => {});
      throw error;
    }
  }
  return { env, logger, sql, databaseUrl: database.url, close };
}
