import { type Env, maskUrl } from "@loops-sync/config";
import { connect, describeConnectionError, readMigrations, resolveDatabase, type Sql } from "@loops-sync/db";
import { CliError } from "../cli-error.ts";
import { refuseBehindSchema } from "../runtime.ts";
import { checkResult, type DoctorCheck } from "./doctor-check.ts";

export interface DoctorDatabase {
  /** Set when Postgres answered and the schema is current: the later checks read from it. */
  sql: Sql | undefined;
  databaseUrl: string | undefined;
  /** DATABASE_URL reaches a hot standby: what calls Loops (the shared budget writes) needs the primary. */
  standby: boolean;
  checks: DoctorCheck[];
  close(): Promise<void>;
}

/**
 * Postgres reachable (`select 1`) and migrated, with the messages every other verb exits 3 with. Doctor never
 * migrates: it names `loops-sync migrate`.
 */
export async function checkDatabase(env: Env): Promise<DoctorDatabase> {
  const checks: DoctorCheck[] = [];
  const fail = (detail: string, fix: string, check = "database"): DoctorDatabase => ({
    sql: undefined,
    databaseUrl: undefined,
    standby: false,
    checks: [...checks, checkResult(check, "fail", "database", detail, { fix })],
    close: async () => {},
  });
  if (!env.DATABASE_URL) {
    checks.push(
      checkResult(
        "database",
        "warn",
        "database",
        `DATABASE_URL unset: the embedded trial PostgreSQL under ${env.LOOPS_SYNC_DATA_DIR}`,
        { fix: "set DATABASE_URL to your production Postgres (docs/deploy.md)" },
      ),
    );
  }
  let database: Awaited<ReturnType<typeof resolveDatabase>>;
  try {
    database = await resolveDatabase(env);
  } catch (error) {
    return fail((error as Error).message, "see docs/deploy.md, or set DATABASE_URL to a Postgres you run");
  }
  const sql = connect(database.url, { max: 2, applicationName: "loops-sync doctor" });
  const close = async () => {
    await sql.end({ timeout: 5 });
    await database.stop();
  };
  try {
    await sql`select 1`;
  } catch (error) {
    await close().catch(() => {});
    return fail(
      describeConnectionError(error, database.url),
      "start Postgres, or correct DATABASE_URL (host, port, database, user)",
    );
  }
  try {
    await refuseBehindSchema(sql);
  } catch (error) {
    await close().catch(() => {});
    if (!(error instanceof CliError)) throw error;
    return fail(
      error.message,
      error.message.includes("edited")
        ? "restore the migration file as released"
        : "run `loops-sync migrate` (or start a service once with LOOPS_SYNC_MIGRATE_ON_START=true)",
      "migrations",
    );
  }
  const { describeStandby, readStandby } = await import("@loops-sync/status");
  const standby = await readStandby(sql);
  if (standby) {
    checks.push(
      checkResult("standby", "warn", "database", describeStandby(standby), {
        fix: "point DATABASE_URL at the primary to check the token, the merchants and the clock (the shared request budget is written there); readers may stay on the standby",
      }),
    );
  }
  const migrations = (await readMigrations()).length;
  checks.push(
    checkResult(
      "database",
      "ok",
      "database",
      `Postgres at ${where(database.url)} answers; the schema is current (${migrations} migrations)`,
    ),
  );
  return { sql, databaseUrl: database.url, standby: standby !== null, checks, close };
}

/** host:port/database, without the user or password. */
function where(url: string): string {
  try {
    const u = new URL(url);
    return `${u.hostname}:${u.port || 5432}${u.pathname}`;
  } catch {
    return maskUrl(url);
  }
}
