import type { Sql, TransactionSql } from "@loops-sync/db";

/**
 * The longest a run of each task may take, in seconds. A job locked longer is almost surely run by no one:
 * a claim whose answer was lost, or a task that ignored its abort signal. Runs over every merchant
 * (catch-up, reconcile, prune) may take long under a small LOOPS_MAX_RPS; every other task is a few calls.
 */
export const JOB_RUN_LIMIT_SECONDS: Readonly<Record<string, number>> = {
  catchup: 3600,
  refresh_resources: 3600,
  reconcile_merchant: 3600,
  prune: 3600,
};
/** The limit of every task not named in JOB_RUN_LIMIT_SECONDS. */
export const DEFAULT_JOB_RUN_LIMIT_SECONDS = 300;

export interface LockedTooLongJob {
  id: number;
  task: string;
  /** The graphile-worker pool holding it (`locked_by`). */
  lockedBy: string;
  /** Where that pool runs, from sync.worker_pools; null when it never registered or was removed. */
  host: string | null;
  pid: number | null;
  lockedSeconds: number;
  limitSeconds: number;
}

/** Jobs locked longer than their task can run, the longest locked first (at most `limit`), and how many in all. */
export async function readLockedTooLong(
  sql: Sql | TransactionSql,
  limit = 20,
): Promise<{ total: number; jobs: LockedTooLongJob[] }> {
  const rows = await sql<
    {
      id: string;
      task: string;
      locked_by: string;
      hostname: string | null;
      pid: number | null;
      locked_seconds: number;
      limit_seconds: number;
      total: number;
    }[]
  >`
    with limits as (
      select j.id, j.task_identifier, j.locked_by, j.locked_at,
             coalesce((${sql.json({ ...JOB_RUN_LIMIT_SECONDS })}::jsonb ->> j.task_identifier)::float8,
                      ${DEFAULT_JOB_RUN_LIMIT_SECONDS}) as limit_seconds
      from graphile_worker.jobs j
      where j.locked_at is not null
    )
    select l.id, l.task_identifier as task, l.locked_by, p.hostname, p.pid,
           extract(epoch from now() - l.locked_at)::float8 as locked_seconds, l.limit_seconds,
           count(*) over ()::int as total
    from limits l left join sync.worker_pools p on p.id = l.locked_by
    where l.locked_at < now() - make_interval(secs => l.limit_seconds)
    order by l.locked_at, l.id
    limit ${limit}`;
  return {
    total: rows[0]?.total ?? 0,
    jobs: rows.map((r) => ({
      id: Number(r.id),
      task: r.task,
      lockedBy: r.locked_by,
      host: r.hostname,
      pid: r.pid,
      lockedSeconds: Math.round(r.locked_seconds),
      limitSeconds: r.limit_seconds,
    })),
  };
}
