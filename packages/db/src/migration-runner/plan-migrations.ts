import type { Sql } from "../connection/connect.ts";
import { type Progress, readProgress, refuseEditedMigrations } from "./migration-progress.ts";
import { parseMigrationSteps, type StepMode } from "./migration-steps.ts";
import { isOnlineMigration, MIGRATIONS_DIR, type MigrationFile, readMigrations } from "./read-migrations.ts";
import { type SqlStatement, splitStatements } from "./split-statements.ts";
import { type StatementLock, statementLock } from "./step-locks.ts";

/** One step migrate would run: `whole-file` for 0001–0024, which run as one transaction each. */
export interface PlannedStep {
  migration: string;
  step: number;
  steps: number;
  description: string;
  mode: StepMode | "whole-file";
  locks: StatementLock[];
}

export interface MigrationPlan {
  /** Migrations not finished, in order. */
  pending: string[];
  /** Their steps not applied yet, in order. */
  steps: PlannedStep[];
}

/**
 * What `migrate` would do now, without doing it: the pending steps and the lock each statement takes, read from
 * the statement's text (step-locks.ts). Refuses, as migrate does, an edited applied file or a malformed one.
 */
export async function planMigrations(sql: Sql, dir = MIGRATIONS_DIR): Promise<MigrationPlan> {
  const files = await readMigrations(dir);
  const progress = await readProgress(sql);
  refuseEditedMigrations(files, progress);
  return planSteps(files, progress);
}

/** The plan for `files` given what is applied (`progress`); with no progress, every step of every file. */
export function planSteps(
  files: readonly MigrationFile[],
  progress: Progress = { done: new Map(), steps: new Map() },
): MigrationPlan {
  const pending = files.filter((f) => !progress.done.has(f.id));
  const steps: PlannedStep[] = [];
  for (const file of pending) {
    const locksOf = newTableLocks(splitStatements(file.sql));
    if (!isOnlineMigration(file)) {
      const locks = splitStatements(file.sql).map((s) => locksOf(s.code));
      steps.push({
        migration: file.name,
        step: 1,
        steps: 1,
        description: "the whole file",
        mode: "whole-file",
        locks,
      });
      continue;
    }
    const done = new Set((progress.steps.get(file.id) ?? []).map((s) => s.step));
    const fileSteps = parseMigrationSteps(file);
    for (const step of fileSteps.filter((s) => !done.has(s.index))) {
      const locks = step.statements.map((s) => locksOf(s.code));
      steps.push({
        migration: file.name,
        step: step.index,
        steps: fileSteps.length,
        description: step.description,
        mode: step.mode,
        locks: step.mode === "batch" ? locks.map((l) => ({ ...l, holds: "batched" as const })) : locks,
      });
    }
  }
  return { pending: pending.map((f) => f.name), steps };
}

const CREATE_TABLE =
  /^create (?:unlogged )?table (?:if not exists )?((?:"[^"]+"|[a-z_][\w$]*)(?:\.(?:"[^"]+"|[a-z_][\w$]*))?)/;

/**
 * statementLock, except that a lock on a table the same file creates holds nobody up: the table is new and
 * empty when the file runs (an index on it needs no `concurrently`).
 */
function newTableLocks(statements: readonly SqlStatement[]): (code: string) => StatementLock {
  const created = new Set(statements.map((s) => CREATE_TABLE.exec(s.code)?.[1]).filter(Boolean));
  return (code) => {
    const lock = statementLock(code);
    if (!lock.table || !created.has(lock.table)) return lock;
    const statement = `${lock.statement.replace(/ \(.*\)$/, "")}, on a table this migration creates`;
    return { ...lock, lock: "none", holds: null, statement };
  };
}
