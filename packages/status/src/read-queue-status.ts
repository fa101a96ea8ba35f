import type { Sql, TransactionSql } from "@loops-sync/db";
import { kyselyOver } from "@loops-sync/schema";
import { sql as raw } from "kysely";
import { readLockedTooLong } from "./read-locked-too-long.ts";
import { iso } from "./read-merchant-statuses.ts";
import { redactSecrets } from "./redact-secrets.ts";
import type { StatusDatabase } from "./status-database.ts";
import type { QueueStatus } from "./sync-status.ts";

type TaskCounts = Omit<QueueStatus["byTask"][number], "task">;

const countWhere = (condition: ReturnType<typeof raw>) =>
  raw<number>`count(*) filter (where ${condition})::int`;
const live = raw`attempts < max_attempts`;

/** graphile-worker's queue (its public `graphile_worker.jobs` view) and the order refresh queue. */
export async function readQueueStatus(sql: Sql | TransactionSql): Promise<QueueStatus> {
  const db = kyselyOver<StatusDatabase>(sql);
  const byTask = await db
    .selectFrom("graphile_worker.jobs")
    .select([
      "task_identifier as task",
      countWhere(raw`locked_at is null and ${live} and run_at <= now()`).as("waiting"),
      countWhere(raw`locked_at is null and ${live} and run_at > now()`).as("scheduled"),
      countWhere(raw`locked_at is not null and ${live}`).as("running"),
      countWhere(raw`attempts >= max_attempts`).as("failed"),
    ])
    .groupBy("task_identifier")
    .orderBy("task_identifier")
    .execute();
  const failedJobs = await db
    .selectFrom("graphile_worker.jobs")
    .select(["id", "task_identifier as task", "attempts", "max_attempts", "last_error", "updated_at"])
    .where(raw<boolean>`attempts >= max_attempts`)
    .orderBy("updated_at", "desc")
    .orderBy("id", "desc")
    .limit(20)
    .execute();
  const orders = await db
    .selectFrom("sync.order_refresh")
    .select([
      raw<number>`count(*)::int`.as("n"),
      raw<number | null>`extract(epoch from now() - min(queued_at))::float8`.as("oldest"),
    ])
    .executeTakeFirstOrThrow();
  const lockedTooLong = await readLockedTooLong(sql);
  // Rows applied from an event's payload, awaiting their confirming fetch (migration 0019's partial index).
  const [unconfirmed] = await sql<{ n: number; oldest: number | null }[]>`
    select count(*)::int as n, extract(epoch from now() - min(unconfirmed_since))::float8 as oldest
    from replica.orders where unconfirmed_since is not null`;
  const total = (k: keyof TaskCounts) => byTask.reduce((s, r) => s + r[k], 0);
  return {
    waiting: total("waiting"),
    scheduled: total("scheduled"),
    running: total("running"),
    failed: total("failed"),
    byTask: byTask.map((r) => ({ ...r })),
    failedJobs: failedJobs.map((r) => ({
      id: Number(r.id),
      task: r.task,
      attempts: r.attempts,
      maxAttempts: r.max_attempts,
      lastError: redactSecrets(r.last_error),
      failedAt: iso(r.updated_at)!,
    })),
    ordersToRefresh: orders.n,
    oldestOrderToRefreshSeconds: orders.oldest === null ? null : Math.round(orders.oldest * 10) / 10,
    lockedTooLong: lockedTooLong.total,
    lockedTooLongJobs: lockedTooLong.jobs,
    ordersUnconfirmed: unconfirmed?.n ?? 0,
    oldestUnconfirmedSeconds: unconfirmed?.oldest == null ? null : Math.round(unconfirmed.oldest * 10) / 10,
  };
}
