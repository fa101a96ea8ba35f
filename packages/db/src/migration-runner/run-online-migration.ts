import type { Sql } from "../connection/connect.ts";
import { DbError } from "../db-error.ts";
import { dropInvalidIndex } from "./drop-invalid-index.ts";
import { type LockRetryContext, withLockRetries } from "./lock-retry.ts";
import type { MigrationStep, StepMode } from "./migration-steps.ts";
import type { MigrationFile } from "./read-migrations.ts";

/** What one applied step cost: the bench and the logs read it. */
export interface StepReport {
  migration: string;
  step: number;
  description: string;
  mode: StepMode;
  ms: number;
  /** Tries of its (last) transaction; more than 1 when it lost a lock and was retried. */
  tries: number;
  /** Batches run (batch steps only), the last one touching no row. */
  batches: number | null;
  rows: number | null;
}

/**
 * Runs the steps of one online migration that are not applied yet, each on the migrating session with a short
 * lock_timeout and lock retries, recording each as it finishes. A step that fails otherwise stops the run; the
 * steps before it stay applied and the next migrate resumes at it.
 */
export async function runOnlineMigration(
  session: Sql,
  retry: LockRetryContext,
  file: MigrationFile,
  steps: readonly MigrationStep[],
  applied: ReadonlySet<number>,
  onStep: (report: StepReport) => void,
): Promise<void> {
  for (const step of steps) {
    if (applied.has(step.index)) continue;
    const what = `migration ${file.name} step ${step.index} (${step.description})`;
    const started = performance.now();
    const record = (tries: number, batches: number | null, rows: number | null) => session`
      insert into sync.migration_steps (migration_id, step, description, checksum, tries, batches, rows)
      values (${file.id}, ${step.index}, ${step.description}, ${file.checksum}, ${tries}, ${batches}, ${rows})
      on conflict (migration_id, step) do nothing`;
    let tries = 0;
    let batches: number | null = null;
    let rows: number | null = null;
    try {
      if (step.mode === "transaction") {
        ({ tries } = await withLockRetries(retry, what, (timeout, attempt) =>
          inTransaction(session, timeout, async () => {
            await session.unsafe(step.sql);
            // In the step's own transaction: the step and its record commit together.
            await record(attempt, null, null);
          }),
        ));
      } else if (step.mode === "concurrently") {
        ({ tries } = await withLockRetries(retry, what, async (timeout) => {
          await session.unsafe(`set lock_timeout = '${timeout}ms'`);
          try {
            // A failed or killed build leaves an INVALID index that `if not exists` would then keep.
            await dropInvalidIndex(session, step.statements[0]!.code);
            await session.unsafe(step.sql);
          } finally {
            await session.unsafe("reset lock_timeout");
          }
        }));
        await record(tries, null, null);
      } else {
        batches = 0;
        rows = 0;
        for (;;) {
          const batch = await withLockRetries(retry, `${what} batch ${batches + 1}`, (timeout) =>
            inTransaction(session, timeout, async () => (await session.unsafe(step.sql)).count),
          );
          batches++;
          tries = Math.max(tries, batch.tries);
          rows += batch.result;
          if (batch.result === 0) break;
        }
        await record(tries, batches, rows);
      }
    } catch (error) {
      if (error instanceof DbError) throw error;
      throw new DbError(
        "migration",
        "migration_failed",
        `${what} failed: ${(error as Error).message}; the steps before it stay applied and the next migrate resumes at it`,
        { cause: error },
      );
    }
    onStep({
      migration: file.name,
      step: step.index,
      description: step.description,
      mode: step.mode,
      ms: Math.round(performance.now() - started),
      tries,
      batches,
      rows,
    });
  }
}

/** `work` in a transaction of the session whose every lock wait ends after `lockTimeoutMs`. */
async function inTransaction<T>(session: Sql, lockTimeoutMs: number, work: () => Promise<T>): Promise<T> {
  await session.unsafe("begin");
  try {
    await session.unsafe(`set local lock_timeout = '${lockTimeoutMs}ms'`);
    const result = await work();
    await session.unsafe("commit");
    return result;
  } catch (error) {
    await session.unsafe("rollback").catch(() => {});
    throw error;
  }
}
