import { createHash } from "node:crypto";
import { existsSync } from "node:fs";
import { readdir, readFile } from "node:fs/promises";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { DbError } from "../db-error.ts";

/**
 * The first online migration: from this number on a file is a list of `-- step:` steps, each its own
 * transaction with a short lock_timeout (docs/upgrading.md). 0001–0024 ran as whole files in deployed databases;
 * their checksums are recorded there, so they keep running that way.
 */
export const FIRST_ONLINE_MIGRATION = 25;

/**
 * The nearest `migrations` folder above this module: the repository's when run from source
 * (packages/db/src/migration-runner), the package's own when bundled into the packed CLI (dist/).
 */
function findMigrationsDir(from: string): string {
  for (let dir = from; ; dir = path.dirname(dir)) {
    const candidate = path.join(dir, "migrations");
    if (existsSync(candidate)) return candidate;
    if (path.dirname(dir) === dir) return path.resolve(from, "../../../../migrations");
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

/** True for a file the online runner runs step by step (0025 on). */
export function isOnlineMigration(file: Pick<MigrationFile, "id">): boolean {
  return file.id >= FIRST_ONLINE_MIGRATION;
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
