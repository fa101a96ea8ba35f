import type { Sql } from "@loops-sync/db";
import type { LoopsSyncProcess } from "#testkit/processes";

/**
 * What a failure's message says about graphile-worker's queue: each job left (its lock, and whether the pool
 * that locks it is registered and when it last beat), the registered pools, what the worker's connections
 * are doing, and the worker's last lines about its pools, claims and Postgres. A job with attempts=1 and no
 * error that stays is locked by a pool nobody runs, or was claimed by a claim whose answer was lost: this
 * tells which.
 */
export async function queueReport(
  sql: Sql,
  { tasks, worker }: { tasks?: readonly string[]; worker?: LoopsSyncProcess } = {},
): Promise<string> {
  const jobs = await sql`
    select j.id, j.task_identifier as task, j.queue_name as queue, j.locked_by, j.locked_at::text,
           j.run_at::text, j.attempts, j.max_attempts, j.last_error,
           p.id is not null as pool_registered, p.heartbeat_at::text as pool_heartbeat_at,
           (now() - p.heartbeat_at)::text as pool_heartbeat_age, now()::text as now
    from graphile_worker.jobs j left join sync.worker_pools p on p.id = j.locked_by
    where ${tasks ? sql`j.task_identifier = any(${tasks as string[]}::text[])` : sql`true`}
    order by j.locked_by nulls last, j.id limit 10`;
  const pools = await sql`select id, pid, heartbeat_at::text from sync.worker_pools order by heartbeat_at`;
  const queues = await sql`
    select queue_name, locked_by, locked_at::text from graphile_worker._private_job_queues
    where locked_by is not null`;
  const activity = await sql`
    select application_name, state, wait_event, (now() - state_change)::text as for, left(query, 100) as query
    from pg_stat_activity
    where datname = current_database() and pid <> pg_backend_pid() and application_name like 'loops-sync%'
      and application_name <> 'loops-sync-test'
    order by application_name, state`;
  const lines = worker
    ?.lastLines(400)
    .filter((line) => /pool|claim|Postgres|queue|job/i.test(line) && !/Completed task/.test(line))
    .slice(-20);
  return JSON.stringify({ jobs, pools, queues, activity, workerLines: lines }, null, 1);
}
