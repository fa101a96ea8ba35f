import type { Sql } from "@loops-sync/db";
import { percentile } from "./percentile.ts";

export interface StageTimes {
  task: string;
  jobs: number;
  /** ms from the job being due (run_at) to a worker locking it. */
  waitP50: number;
  waitP99: number;
  /** ms from locking to completion (the job's row deleted). */
  runP50: number;
  runP99: number;
  /** ms from creation to due: the deliberate delay (coalescing window). */
  delayP50: number;
}

/**
 * Where a job's time goes, for `--trace`: bench-only triggers on this run's database log each job's
 * creation, lock and completion with clock_timestamp(), so the wait for a worker, the deliberate delay and
 * the run itself can be told apart.
 */
export async function startJobTrace(
  sql: Sql,
): Promise<{ read(): Promise<StageTimes[]>; close(): Promise<void> }> {
  await sql.unsafe(`
    create table public.bench_job_trace (id bigint, task_id int, kind text, run_at timestamptz, at timestamptz);
    create or replace function public.bench_trace_job() returns trigger language plpgsql as $$
    begin
      if tg_op = 'INSERT' then
        insert into public.bench_job_trace values (new.id, new.task_id, 'created', new.run_at, clock_timestamp());
      elsif tg_op = 'UPDATE' and new.locked_at is not null and old.locked_at is null then
        insert into public.bench_job_trace values (new.id, new.task_id, 'locked', new.run_at, clock_timestamp());
      elsif tg_op = 'DELETE' then
        insert into public.bench_job_trace values (old.id, old.task_id, 'done', old.run_at, clock_timestamp());
      end if;
      return null;
    end $$;
    create trigger bench_trace_job after insert or update or delete on graphile_worker._private_jobs
      for each row execute function public.bench_trace_job();`);
  return {
    async read() {
      const rows = await sql<{ task: string; delay: number | null; wait: number; run: number }[]>`
        with j as (
          select id, task_id,
                 min(at) filter (where kind = 'created') as created,
                 max(run_at) filter (where kind = 'locked') as due,
                 max(at) filter (where kind = 'locked') as locked,
                 max(at) filter (where kind = 'done') as done
          from public.bench_job_trace group by id, task_id
        )
        select t.identifier as task,
               (extract(epoch from (j.due - j.created)) * 1000)::float8 as delay,
               (extract(epoch from (j.locked - greatest(j.due, j.created))) * 1000)::float8 as wait,
               (extract(epoch from (j.done - j.locked)) * 1000)::float8 as run
        from j join graphile_worker._private_tasks t on t.id = j.task_id
        where j.locked is not null and j.done is not null`;
      type TraceRow = (typeof rows)[number];
      const byTask = new Map<string, TraceRow[]>();
      for (const r of rows) byTask.set(r.task, [...(byTask.get(r.task) ?? []), r]);
      return [...byTask].map(([task, list]) => ({
        task,
        jobs: list.length,
        waitP50: percentile(
          list.map((r) => r.wait),
          50,
        ),
        waitP99: percentile(
          list.map((r) => r.wait),
          99,
        ),
        runP50: percentile(
          list.map((r) => r.run),
          50,
        ),
        runP99: percentile(
          list.map((r) => r.run),
          99,
        ),
        // Jobs created before the trace started have no creation row, hence no delay.
        delayP50: percentile(
          list.flatMap((r) => (r.delay === null ? [] : [r.delay])),
          50,
        ),
      }));
    },
    async close() {
      await sql.unsafe(`
        drop trigger if exists bench_trace_job on graphile_worker._private_jobs;
        drop function if exists public.bench_trace_job();
        drop table if exists public.bench_job_trace;`);
    },
  };
}
