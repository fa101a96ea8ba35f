import { DbError } from "../db-error.ts";
import { concurrentIndexOf } from "./drop-invalid-index.ts";
import type { MigrationFile } from "./read-migrations.ts";
import { type SqlStatement, splitStatements } from "./split-statements.ts";

/**
 * How a step runs: `transaction` (its statements in one transaction), `concurrently` (its one statement outside
 * any transaction), `batch` (its one statement repeated, each time in its own transaction, until it touches no row).
 */
export type StepMode = "transaction" | "concurrently" | "batch";

export interface MigrationStep {
  /** 1-based position in its file. */
  index: number;
  /** The text after `-- step:`. */
  description: string;
  mode: StepMode;
  /** The step's SQL as written (comments included), run as is. */
  sql: string;
  statements: SqlStatement[];
}

const MARKER = /^-- step(\(batch\))?: (\S.*)$/;
// Anything that looks like a marker but is not one exactly: refused, never read as a comment.
const LOOKS_LIKE_MARKER = /^\s*--\s*step\b/i;
const TRANSACTION_CONTROL = /^(begin|commit|rollback|end|start transaction|savepoint|release|abort)\b/;
const BATCH_VERB = /^(with\b.*\b)?(update|delete|insert)\b/;
/** The most rows one batch may touch (docs/upgrading.md, "Writing a migration"). */
export const MAX_BATCH_ROWS = 10_000;

function malformed(file: MigrationFile, why: string): DbError<"migration"> {
  return new DbError("migration", "migration_malformed", `migration ${file.name} is malformed: ${why}`);
}

/**
 * Splits an online migration (0025 on) into its steps, refusing what the runner could not run safely: SQL before
 * the first step, a near-miss marker, an empty step, a `concurrently` statement that is not alone in its step,
 * transaction control, a batch that is not one bounded DML statement, a constraint validated in the step that
 * adds it.
 */
export function parseMigrationSteps(file: MigrationFile): MigrationStep[] {
  const lines = file.sql.split("\n");
  const steps: { description: string; batch: boolean; line: number; body: string[] }[] = [];
  const header: string[] = [];
  lines.forEach((line, n) => {
    const marker = MARKER.exec(line.trimEnd());
    if (marker) {
      steps.push({ description: marker[2]!.trim(), batch: marker[1] !== undefined, line: n + 1, body: [] });
    } else if (LOOKS_LIKE_MARKER.test(line)) {
      throw malformed(
        file,
        `line ${n + 1} "${line.trim()}" is not a step marker; write "-- step: <what it does>" or "-- step(batch): <what it does>"`,
      );
    } else (steps.at(-1)?.body ?? header).push(line);
  });
  if (splitStatements(header.join("\n")).length > 0) {
    throw malformed(file, `SQL before the first "-- step:" line; every statement belongs to a step`);
  }
  if (steps.length === 0) throw malformed(file, `no "-- step: <what it does>" line`);
  return steps.map((s, i) => {
    const sql = s.body.join("\n");
    const statements = splitStatements(sql);
    const where = `step ${i + 1} (line ${s.line}, ${s.description})`;
    if (statements.length === 0) throw malformed(file, `${where} has no statement`);
    for (const st of statements) {
      if (TRANSACTION_CONTROL.test(st.code)) {
        throw malformed(
          file,
          `${where} controls the transaction itself ("${st.code.slice(0, 40)}"); the runner does`,
        );
      }
    }
    const concurrent = statements.some((st) => /\bconcurrently\b/.test(st.code));
    if (concurrent && statements.length > 1) {
      throw malformed(
        file,
        `${where} has ${statements.length} statements and one is concurrently; a concurrently statement is a step of its own`,
      );
    }
    if (
      concurrent &&
      /^create (unique )?index\b/.test(statements[0]!.code) &&
      !concurrentIndexOf(statements[0]!.code)
    ) {
      throw malformed(
        file,
        `${where} builds an index concurrently without naming it (the runner checks it by name)`,
      );
    }
    if (concurrent && s.batch) throw malformed(file, `${where} is a batch and runs concurrently`);
    if (s.batch) checkBatch(file, where, statements);
    if (
      statements.some((st) => /\bvalidate constraint\b/.test(st.code)) &&
      statements.some((st) => /\bnot valid\b/.test(st.code))
    ) {
      throw malformed(
        file,
        `${where} adds a constraint not valid and validates one; validate in a later step`,
      );
    }
    const mode: StepMode = s.batch ? "batch" : concurrent ? "concurrently" : "transaction";
    return { index: i + 1, description: s.description, mode, sql, statements };
  });
}

function checkBatch(file: MigrationFile, where: string, statements: SqlStatement[]): void {
  const [only] = statements;
  if (statements.length !== 1 || !only) {
    throw malformed(
      file,
      `${where} is a batch with ${statements.length} statements; a batch is one statement`,
    );
  }
  if (!BATCH_VERB.test(only.code)) {
    throw malformed(file, `${where} is a batch but not an update, delete or insert`);
  }
  const limits = [...only.code.matchAll(/\blimit (\d+)\b/g)].map((m) => Number(m[1]));
  if (limits.length === 0 || limits.some((n) => n > MAX_BATCH_ROWS)) {
    throw malformed(file, `${where} is a batch without "limit N" (N ≤ ${MAX_BATCH_ROWS}) bounding its rows`);
  }
}
