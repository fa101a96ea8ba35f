import { Logger, runMigrations } from "graphile-worker";
import { connect, type Sql } from "./connection/connect.ts";
import { DbError, isDbError } from "./db-error.ts";
import type { LockRetryOptions } from "./migration-runner/lock-retry.ts";
import {
  bootstrapProgress,
  readProgress,
  refuseEditedMigrations,
} from "./migration-runner/migration-progress.ts";
import { parseMigrationSteps } from "./migration-runner/migration-steps.ts";
import { isOnlineMigration, MIGRATIONS_DIR, readMigrations } from "./migration-runner/read-migrations.ts";
import { runOnlineMigration, type StepReport } from "./migration-runner/run-online-migration.ts";
import { reapplyRoleRights } from "./roles/reapply-role-rights.ts";

export { MIGRATIONS_DIR, type MigrationFile, readMigrations } from "./migration-runner/read-migrations.ts";

export interface MigrateResult {
  /** Files finished by this run. */
  applied: string[];
  /** Steps of online migrations (0025 on) this run applied, in order, with what each cost. */
  steps: StepReport[];
}

export interface MigrateOptions extends LockRetryOptions {
  /** Called as each online step finishes. Default: nothing. */
  onStep?: (report: StepReport) => void;
}

// Serialises concurrent migrators (several processes starting at once) and `loops-sync grant`; any 64-bit
// constant will do.
export const MIGRATION_LOCK = 7_240_315_981;

/**
 * Applies our SQL migrations in order, then graphile-worker's. One session does it under a session-level advisory
 * lock, so concurrent migrators wait for each other. 0001–0024 run whole, one transaction each; from 0025 each
 * step is its own transaction with a short lock_timeout, retried when it loses a lock (docs/upgrading.md).
 * Refuses to run when an applied migration's file has changed. When it applied any, it gives the roles
 * `loops-sync grant` recorded their rights again, after checking first that it can.
 */
export async function migrate(
  sql: Sql,
  connectionString: string,
  dir = MIGRATIONS_DIR,
  { lockTimeoutMs = 500, giveUpAfterMs = 60_000, onStep = () => {} }: MigrateOptions = {},
): Promise<MigrateResult> {
  if (!(lockTimeoutMs > 0 && lockTimeoutMs <= 1000))
    throw new RangeError("lockTimeoutMs must be in (0, 1000]");
  const files = await readMigrations(dir);
  const applied: string[] = [];
  const steps: StepReport[] = [];
  // Its own connection, reserved: session state (the advisory lock, lock_timeout) never leaks into the caller's
  // pool, and no idle or lifetime timer closes it (which would drop the lock) mid-run.
  const pool = connect(connectionString, {
    max: 1,
    idleTimeoutSeconds: 0,
    applicationName: "loops-sync migrate",
  });
  const reserved = await pool.reserve().catch(async (error: unknown) => {
    await pool.end({ timeout: 5 });
    throw error;
  });
  const session = reserved as unknown as Sql;
  try {
    const [me] = await session<{ pid: number }[]>`select pg_backend_pid() as pid`;
    await session`set lock_timeout = 0`;
    await session`select pg_advisory_lock(${MIGRATION_LOCK})`;
    await bootstrapProgress(session);
    const progress = await readProgress(session);
    refuseEditedMigrations(files, progress);
    const pending = files.filter((f) => !progress.done.has(f.id));
    // Every pending online file parses before anything runs: a malformed 0027 stops 0025 too.
    const parsed = new Map(pending.filter(isOnlineMigration).map((f) => [f.id, parseMigrationSteps(f)]));
    if (pending.length > 0) await checkRoleRights(session);
    const retry = { lockTimeoutMs, giveUpAfterMs, observer: sql, sessionPid: me!.pid };
    for (const file of pending) {
      const fileSteps = parsed.get(file.id);
      if (fileSteps) {
        const done = new Set((progress.steps.get(file.id) ?? []).map((s) => s.step));
        await runOnlineMigration(session, retry, file, fileSteps, done, (report) => {
          steps.push(report);
          onStep(report);
        });
        await session`insert into sync.migrations (id, name, checksum) values (${file.id}, ${file.name}, ${file.checksum}) on conflict (id) do nothing`;
      } else {
        await inTransaction(session, file.name, async () => {
          await session.unsafe(file.sql);
          await session`insert into sync.migrations (id, name, checksum) values (${file.id}, ${file.name}, ${file.checksum})`;
        });
      }
      applied.push(file.name);
    }
    if (applied.length > 0) {
      await inTransaction(session, null, () => reapplyRoleRights(session)).catch((error: unknown) => {
        if (!isDbError(error, "migration")) throw error;
        throw new DbError(
          "migration",
          error.code,
          error.message.replace(
            /; nothing was applied$/,
            "; the migrations are applied, the rights are not: fix this and run migrate again",
          ),
          { cause: error },
        );
      });
    }
  } finally {
    // Ending the connection releases the advisory lock.
    reserved.release();
    await pool.end({ timeout: 5 });
  }
  await runMigrations({ connectionString, logger: new Logger(() => () => {}) });
  return { applied, steps };
}

/** Grants that would fail after the migrations fail now, before anything is applied (rolled back). */
async function checkRoleRights(session: Sql): Promise<void> {
  await session.unsafe("begin");
  try {
    await reapplyRoleRights(session);
  } finally {
    await session.unsafe("rollback");
  }
}

/** A whole file (0001–0024) or the role rights in one transaction; a file's failure names it. */
async function inTransaction<T>(session: Sql, file: string | null, work: () => Promise<T>): Promise<T> {
  await session.unsafe("begin");
  try {
    const result = await work();
    await session.unsafe("commit");
    return result;
  } catch (error) {
    await session.unsafe("rollback").catch(() => {});
    if (file === null || error instanceof DbError) throw error;
    throw new DbError(
      "migration",
      "migration_failed",
      `migration ${file} failed: ${(error as Error).message}`,
      {
        cause: error,
      },
    );
  }
}

/**
 * Names of migrations on disk that the database has not finished (empty when current). A migration with only
 * some of its steps applied is pending; so is an applied one whose file changed.
 */
export async function pendingMigrations(sql: Sql, dir = MIGRATIONS_DIR): Promise<string[]> {
  const files = await readMigrations(dir);
  const rows = await sql`select id, checksum from sync.migrations`.catch(() => []);
  const done = new Map(rows.map((r) => [r.id as number, r.checksum as string]));
  return files.filter((f) => done.get(f.id) !== f.checksum).map((f) => f.name);
}
