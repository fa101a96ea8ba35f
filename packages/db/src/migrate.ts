import { createHash } from "node:crypto";
import { existsSync } from "node:fs";
import { readdir, readFile } from "node:fs/promises";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { Logger, runMigrations } from "graphile-worker";
import type { Sql } from "./connection/connect.ts";
import { DbError } from "./db-error.ts";
import { reapplyRoleRights } from "./roles/reapply-role-rights.ts";

/**
 * The nearest `migrations` folder above this module: the repository's when run from source
 * (packages/db/src), the package's own when bundled into the packed CLI (dist/).
 */
function findMigrationsDir(from: string): string {
  for (let dir = from; ; dir = path.dirname(dir)) {
    const candidate = path.join(dir, "migrations");
    if (existsSync(candidate)) return candidate;
    if (path.dirname(dir) === dir) return path.resolve(from, "../../../migrations");
  }
}

/** The migrations folder this build ships with. */
export const MIGRATIONS_DIR = findMigrationsDir(path.dirname(fileURLToPath(import.meta.url)));

export interface MigrationFile {
  id: number;
  name: string;
  checksum: string;
  sql: string;
}

export async function readMigrations(dir = MIGRATIONS_DIR): Promise<MigrationFile[]> {
  const names = (await readdir(dir)).filter((n) => n.endsWith(".sql")).sort();
  const files: MigrationFile[] = [];
  for (const name of names) {
    const match = /^(\d{4})_[a-z0-9_]+\.sql$/.exec(name);
    if (!match) {
      throw new DbError("migration", "migration_name", `migration file ${name} must be named NNNN_words.sql`);
    }
    const sql = await readFile(path.join(dir, name), "utf8");
    files.push({ id: Number(match[1]), name, sql, checksum: createHash("sha256").update(sql).digest("hex") });
  }
  for (let i = 1; i < files.length; i++) {
    if (files[i]!.id === files[i - 1]!.id) {
      throw new DbError(
        "migration",
        "migration_name",
        `migrations ${files[i - 1]!.name} and ${files[i]!.name} share a number`,
      );
    }
  }
  return files;
}

export interface MigrateResult {
  applied: string[];
}

// Serialises concurrent migrators (several processes starting at once) and `loops-sync grant`; any 64-bit
// constant will do.
export const MIGRATION_LOCK = 7_240_315_981;

/**
 * Applies our SQL migrations in order, each in its own transaction with its checksum recorded, then
 * graphile-worker's own. Refuses to run when an applied migration's file has changed. When it applied any, it
 * gives the roles `loops-sync grant` recorded their rights again in the same transaction, so what the new
 * migrations added is covered.
 */
export async function migrate(
  sql: Sql,
  connectionString: string,
  dir = MIGRATIONS_DIR,
): Promise<MigrateResult> {
  const files = await readMigrations(dir);
  const applied: string[] = [];
  await sql.begin(async (tx) => {
    await tx`select pg_advisory_xact_lock(${MIGRATION_LOCK})`;
    await tx`create schema if not exists sync`;
    await tx`
      create table if not exists sync.migrations (
        id integer primary key,
        name text not null,
        checksum text not null,
        applied_at timestamptz not null default now()
      )`;
    const done = new Map(
      (await tx`select id, name, checksum from sync.migrations`).map((r) => [r.id as number, r]),
    );
    for (const file of files) {
      const previous = done.get(file.id);
      if (previous) {
        if (previous.checksum !== file.checksum) {
          throw new DbError(
            "migration",
            "migration_changed",
            `migration ${file.name} was edited after it was applied (checksum ${String(previous.checksum).slice(0, 12)} in the database, ${file.checksum.slice(0, 12)} on disk); restore the file and put the change in a new migration`,
          );
        }
        continue;
      }
      try {
        await tx.savepoint(async (sp) => {
          await sp.unsafe(file.sql);
          await sp`insert into sync.migrations (id, name, checksum) values (${file.id}, ${file.name}, ${file.checksum})`;
        });
      } catch (error) {
        throw new DbError(
          "migration",
          "migration_failed",
          `migration ${file.name} failed: ${(error as Error).message}`,
          {
            cause: error,
          },
        );
      }
      applied.push(file.name);
    }
    if (applied.length > 0) await reapplyRoleRights(tx);
  });
  await runMigrations({ connectionString, logger: new Logger(() => () => {}) });
  return { applied };
}

/** Names of migrations on disk that the database has not applied (empty when current). */
export async function pendingMigrations(sql: Sql, dir = MIGRATIONS_DIR): Promise<string[]> {
  const files = await readMigrations(dir);
  const rows = await sql`select id, checksum from sync.migrations`.catch(() => []);
  const done = new Map(rows.map((r) => [r.id as number, r.checksum as string]));
  return files.filter((f) => done.get(f.id) !== f.checksum).map((f) => f.name);
}
