import {
  createLogger,
  type Env,
  type Logger,
  loadEnv,
  maskUrl,
  type RequiredVariable,
} from "@loops-sync/config";
import {
  connect,
  describeConnectionError,
  migrate,
  pendingMigrations,
  resolveDatabase,
  type Sql,
} from "@loops-sync/db";
import { CliError, EXIT } from "./cli-error.ts";
import { startTracingFromEnv } from "./start-tracing-from-env.ts";

export interface Runtime {
  env: Env;
  logger: Logger;
  sql: Sql;
  databaseUrl: string;
  /** DATABASE_URL reaches a hot standby (only a `readOnly` verb gets this far there). */
  standby: boolean;
  close(): Promise<void>;
}

export interface OpenRuntimeOptions {
  /** Component name for log lines. */
  name: string;
  /** Variables this command cannot run without. Default: none. */
  require?: readonly RequiredVariable[];
  /**
   * A service (receiver, worker, start): migrates when LOOPS_SYNC_MIGRATE_ON_START is true, and warns once
   * when it runs on the embedded trial database. Every other verb never changes the schema. Default: false.
   */
  service?: boolean;
  /** A service started with `--no-migrate`: never migrate, whatever LOOPS_SYNC_MIGRATE_ON_START says. */
  noMigrate?: boolean;
  /**
   * The verb only reads, so it runs on a hot standby too. Every other verb writes (a service, an operator
   * command, and whatever calls Loops: the shared request budget is kept in Postgres) and is refused there with
   * exit 3 naming the primary. Default: false.
   */
  readOnly?: boolean;
  /** Skip the check that the schema is current (`migrate` itself). Default: false. */
  allowPendingMigrations?: boolean;
  /** Pool size. Default: DATABASE_POOL_SIZE. */
  poolSize?: number;
  /** Environment to read. Default: process.env. */
  source?: NodeJS.ProcessEnv;
  /** Start OpenTelemetry tracing first when OTEL_* asks for it (services and verbs that call Loops). Default: false. */
  tracing?: boolean;
}

/**
 * Reads the environment, reaches Postgres (or starts the embedded one), migrates when a service is asked to,
 * and refuses to go on against a schema that is behind the code.
 */
export async function openRuntime({
  name,
  require = [],
  service = false,
  noMigrate = false,
  allowPendingMigrations = false,
  readOnly = false,
  poolSize,
  source,
  tracing = false,
}: OpenRuntimeOptions): Promise<Runtime> {
  const env = loadEnv(source, { require });
  // Before anything else, so every span (and log line) of the process has a tracer.
  const traces = tracing ? await startTracingFromEnv(env, name) : undefined;
  const logFields = traces ? (await import("@loops-sync/tracing")).logTraceFields : undefined;
  const logger = createLogger({ name, level: env.LOG_LEVEL, mixin: logFields });
  if (service && !env.DATABASE_URL) {
    logger.warn(
      `DATABASE_URL unset: embedded PostgreSQL under ${env.LOOPS_SYNC_DATA_DIR} — for trials; set DATABASE_URL for production`,
    );
  }
  const database = await resolveDatabase(env);
  const sql = connect(database.url, {
    max: poolSize ?? env.DATABASE_POOL_SIZE,
    applicationName: `loops-sync ${name}`,
  });
  const close = async () => {
    await sql.end({ timeout: 5 });
    await database.stop();
    // Last: the spans of the shutdown itself are sent too.
    await traces?.shutdown();
  };
  let standby: boolean;
  try {
    [{ standby }] = await sql<[{ standby: boolean }]>`select pg_is_in_recovery() as standby`;
  } catch (error) {
    await close().catch(() => {});
    throw new CliError(describeConnectionError(error, database.url), EXIT.database, { cause: error });
  }
  if (standby && !readOnly) {
    await close().catch(() => {});
    // Before migrating or anything else: every write there fails with Postgres' own words.
    throw new CliError(
      `${name} writes, and DATABASE_URL points at a read-only standby (${maskUrl(database.url)}): run it against the primary`,
      EXIT.database,
    );
  }
  try {
    if (service && !noMigrate && env.LOOPS_SYNC_MIGRATE_ON_START) {
      const { applied } = await migrate(sql, database.url);
      if (applied.length > 0) logger.info({ applied }, "migrations applied");
    } else if (!allowPendingMigrations) {
      await refuseBehindSchema(sql);
    }
  } catch (error) {
    await close().catch(() => {});
    throw error;
  }
  return { env, logger, sql, databaseUrl: database.url, standby, close };
}

/** Exit 3 naming the first migration the database lacks: a command never runs against an older schema. */
export async function refuseBehindSchema(sql: Sql): Promise<void> {
  // A reader's or consumer's role (loops-sync grant) cannot see sync.migrations: say that, not "schema behind".
  const [access] = await sql<{ ok: boolean; role: string }[]>`
    select to_regnamespace('sync') is null or has_schema_privilege('sync', 'USAGE') as ok, current_user as role`;
  if (access && !access.ok) {
    throw new CliError(
      `DATABASE_URL connects as role ${access.role}, which cannot read the sync schema (a reader or consumer role); loops-sync commands run as the role that runs migrate`,
      EXIT.usage,
    );
  }
  const pending = await pendingMigrations(sql);
  if (pending.length === 0) return;
  // pendingMigrations also lists applied migrations whose file changed since: that is no "run migrate".
  const rows = await sql<{ name: string }[]>`select name from sync.migrations`.catch(() => []);
  const applied = new Set(rows.map((r) => r.name));
  const edited = pending.find((name) => applied.has(name));
  if (edited) {
    throw new CliError(
      `migration ${edited} was edited after it was applied; restore the file and put the change in a new migration`,
      EXIT.database,
    );
  }
  const more = pending.length > 1 ? ` and ${pending.length - 1} more` : "";
  throw new CliError(
    `the database schema is behind: migration ${pending[0]}${more} not applied; run \`loops-sync migrate\``,
    EXIT.database,
  );
}
