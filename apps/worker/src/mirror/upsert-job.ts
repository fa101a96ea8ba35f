import type { ResourceChange, Sql, TransactionSql } from "@loops-sync/db";
import { applyJob, applyMenuIfNewer, type JobInput, type MenuInput } from "@loops-sync/replica";

export type { JobInput, MenuInput };

/**
 * Stores a background job and its results (see `applyJob`: gated on the lifecycle, an equal read writes
 * nothing). Returns the change, if any, for the feed.
 */
export async function upsertJob(
  sql: Sql | TransactionSql,
  merchantId: string,
  job: JobInput,
): Promise<ResourceChange[]> {
  const change = await applyJob(sql, merchantId, job);
  return change ? [change] : [];
}

/**
 * Stores a brand's menu and replaces its rows only when its version is newer (see `applyMenuIfNewer`).
 * Returns the change, if any, for the feed (resource `menu`, named by its brand).
 */
export async function upsertMenu(
  sql: Sql | TransactionSql,
  merchantId: string,
  menu: MenuInput,
): Promise<ResourceChange[]> {
  const change = await applyMenuIfNewer(sql, merchantId, menu);
  return change ? [change] : [];
}
