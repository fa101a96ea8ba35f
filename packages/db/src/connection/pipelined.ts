import { DbError } from "../db-error.ts";
import type { Sql, TransactionSql } from "./connect.ts";

/** What the work of a {@link pipelinedTransaction} hands back. */
export interface PipelinedWork<T> {
  result: T;
  /**
   * Statements the work sent (`.execute()`) and did not wait for: they go out with the COMMIT, in one round
   * trip. Each is awaited once the COMMIT has answered; if one failed, Postgres ended the transaction with
   * a rollback, and that statement's error is thrown.
   */
  tail?: readonly PromiseLike<unknown>[];
}

const transactions = new WeakSet<object>();

/** True when `sql` runs its statements inside a transaction (`sql.begin`'s, or a pipelined one). */
export function isTransaction(sql: Sql | TransactionSql): sql is TransactionSql {
  return typeof (sql as { savepoint?: unknown }).savepoint === "function" || transactions.has(sql);
}

/**
 * A transaction on a reserved connection whose BEGIN travels with the first statement and whose COMMIT
 * travels with the last ones (`tail`), so a transaction of two dependent steps costs two round trips
 * instead of four. `sql.begin` waits for its BEGIN before the work starts and sends COMMIT only after the
 * work's last statement has answered; on a busy machine each of those round trips is a wake-up of the
 * Postgres backend and of this process, and it is waiting time for whoever waits on this commit.
 * Statements must not be sent after the work resolves. An error thrown by the work rolls back. Unlike
 * `sql.begin`, nothing here watches statements the work sent and did not wait for: each must be in the
 * tail or have a handler of its own, or its failure (a broken connection) is an unhandled rejection.
 * Savepoints are not available.
 */
export async function pipelinedTransaction<T>(
  sql: Sql,
  work: (tx: TransactionSql) => Promise<PipelinedWork<T>>,
): Promise<T> {
  const reserved = await sql.reserve();
  const tx = reserved as unknown as TransactionSql;
  transactions.add(tx);
  // If the connection closes meanwhile, the reserved handle refuses every later statement (this ROLLBACK
  // too) and its release does not hand the connection out again (patches/postgres@3.4.9.patch).
  const rollBack = () => reserved`rollback`.catch(() => {});
  try {
    const begin = reserved`begin`.execute();
    // Its failure (the connection broke) also fails every statement after it; it is reported from there.
    begin.catch(() => {});
    let done: PipelinedWork<T>;
    try {
      done = await work(tx);
    } catch (error) {
      await rollBack();
      throw error;
    }
    // Handlers attached before the COMMIT is sent: a tail statement that fails must not be unhandled.
    const tail = Promise.allSettled(done.tail ?? []);
    let commit: Awaited<ReturnType<typeof reserved>>;
    try {
      commit = await reserved`commit`;
    } catch (error) {
      await rollBack();
      throw error;
    }
    await begin;
    for (const outcome of await tail) if (outcome.status === "rejected") throw outcome.reason;
    if (commit.command !== "COMMIT") {
      throw new DbError("rolled_back", "rolled_back", "Postgres rolled the transaction back at COMMIT");
    }
    return done.result;
  } finally {
    transactions.delete(tx);
    reserved.release();
  }
}
