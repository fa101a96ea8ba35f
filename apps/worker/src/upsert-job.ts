import type { Sql, TransactionSql } from "@loops-sync/db";
import { applyJob, applyMenuIfNewer, type JobInput, type MenuInput } from "@loops-sync/replica";

export type { JobInput, MenuInput };

/** Stores a background job and its results (see `applyJob`). Returns whether it wrote. */
export async function upsertJob(
  sql: Sql | TransactionSql,
  merchantId: string,
  job: JobInput,
): Promise<boolean> {
  return (await applyJob(sql, merchantId, job)) !== undefined;
}

/** Stores a brand's menu and its rows only when its version is newer (see `applyMenuIfNewer`). */
export async function upsertMenu(
  sql: Sql | TransactionSql,
  merchantId: string,
  menu: MenuInput,
): Promise<boolean> {
  return (await applyMenuIfNewer(sql, merchantId, menu)) !== undefined;
}
