import type { Sql, TransactionSql } from "@loops-sync/db";
import { iso } from "./readMerchantStatuses.ts";
import { redactSecrets } from "./redactSecrets.ts";
import type { QueueStatus } from "./syncStatus.ts";

interface TaskRow {
  task: string;
  waiting: number;
  scheduled: number;
  running: number;
  failed: number;
}

interface FailedRow {
  id: number;
  task: string;
  attempts: number;
  max_attempts: number;
  last_error: string | null;
  updated_at: Date;
}

/** graphile-worker's queue (its public `graphile_worker.jobs` view) and the order refresh queue. */
export async function readQueueStatus(sql: Sql | TransactionSql): Promise<QueueStatus> {
  const byTask = await sql<TaskRow[]>`
    select task_identifier as task,
           count(*) filter (where locked_at is null and attempts < max_attempts and run_at <= now())::int as waiting,
           count(*) filter (where locked_at is null and attempts < max_attempts and run_at > now())::int as scheduled,
           count(*) filter (where locked_at is not null and attempts < max_attempts)::int as running,
           count(*) filter (where attempts >= max_attempts)::int as failed
    from graphile_worker.jobs
    group by task_identifier
    order by task_identifier`;
  const failedJobs = await sql<FailedRow[]>`
    select id, task_identifier as task, attempts, max_attempts, last_error, updated_at
    from graphile_worker.jobs
    where attempts >= max_attempts
    order by updated_at desc, id desc
    limit 20`;
  const [orders] = await sql<{ n: number; oldest: number | null }[]>`
    select count(*)::int as n, extract(epoch from now() - min(queued_at))::float8 as oldest
    from sync.order_refresh`;
  const total = (k: keyof Omit<TaskRow, "task">) => byTask.reduce((s, r) => s + r[k], 0);
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
    ordersToRefresh: orders!.n,
    oldestOrderToRefreshSeconds: orders!.oldest === null ? null : Math.round(orders!.oldest * 10) / 10,
  };
}
