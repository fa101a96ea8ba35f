import { isTransaction, type Sql, type TransactionSql } from "@loops-sync/db";

/** Runs `work` in the caller's transaction when given one, otherwise in a new one. */
export async function inTransaction<T>(
  sql: Sql | TransactionSql,
  work: (tx: TransactionSql) => Promise<T>,
): Promise<T> {
  if (isTransaction(sql)) return await work(sql);
  return (await sql.begin((tx) => work(tx))) as T;
}
