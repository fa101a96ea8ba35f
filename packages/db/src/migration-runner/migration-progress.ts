import type { Sql } from "../connection/connect.ts";
import { DbError } from "../db-error.ts";
import type { MigrationFile } from "./read-migrations.ts";

/**
 * The runner's own tables, made before any migration: sync.migrations (a row per finished file, with its
 * checksum) and sync.migration_steps (a row per finished step of an online file, so a crash resumes at the
 * next step).
 */
export async function bootstrapProgress(session: Sql): Promise<void> {
  await session`create schema if not exists sync`;
  await session`
    create table if not exists sync.migrations (
      id integer primary key,
      name text not null,
      checksum text not null,
      applied_at timestamptz not null default now()
    )`;
  await session`
    create table if not exists sync.migration_steps (
      migration_id integer not null,
      step integer not null,
      description text not null,
      -- The file's checksum when the step ran: an edit of a half-applied file is refused.
      checksum text not null,
      tries integer not null,
      batches integer,
      rows bigint,
      applied_at timestamptz not null default now(),
      primary key (migration_id, step)
    )`;
}

export interface Progress {
  /** Checksum of each finished migration, by id. */
  done: Map<number, string>;
  /** Finished steps of each unfinished migration, by id, with the checksum they ran under. */
  steps: Map<number, { step: number; checksum: string }[]>;
}

/** What is applied. Empty (not an error) before the runner's tables exist: `--plan` may run first. */
export async function readProgress(sql: Sql): Promise<Progress> {
  const done = await sql<{ id: number; checksum: string }[]>`select id, checksum from sync.migrations`.catch(
    () => [],
  );
  const rows = await sql<{ migration_id: number; step: number; checksum: string }[]>`
    select s.migration_id, s.step, s.checksum from sync.migration_steps s
     where not exists (select from sync.migrations m where m.id = s.migration_id)
     order by 1, 2`.catch(() => []);
  const steps = new Map<number, { step: number; checksum: string }[]>();
  for (const r of rows) steps.set(r.migration_id, [...(steps.get(r.migration_id) ?? []), r]);
  return { done: new Map(done.map((r) => [r.id, r.checksum])), steps };
}

/** Refuses files edited after they (or some of their steps) were applied: the database holds the old text. */
export function refuseEditedMigrations(files: readonly MigrationFile[], progress: Progress): void {
  for (const file of files) {
    const applied = progress.done.get(file.id);
    const steps = progress.steps.get(file.id) ?? [];
    const stale = applied ?? steps.find((s) => s.checksum !== file.checksum)?.checksum;
    if (stale === undefined || stale === file.checksum) continue;
    const what = applied
      ? "it was applied"
      : `steps ${steps.map((s) => s.step).join(", ")} of it were applied`;
    throw new DbError(
      "migration",
      "migration_changed",
      `migration ${file.name} was edited after ${what} (checksum ${stale.slice(0, 12)} in the database, ${file.checksum.slice(0, 12)} on disk); restore the file and put the change in a new migration`,
    );
  }
}
