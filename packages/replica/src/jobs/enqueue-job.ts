import type { Sql, TaskName, TaskPayloads, TransactionSql } from "@loops-sync/db";
import type { Job } from "graphile-worker";
import { merchantFlag } from "../merchants/merchant-state.ts";

/** Attempts a job gets unless it says otherwise: about 22 hours of graphile-worker's exponential backoff. */
export const DEFAULT_MAX_ATTEMPTS = 12;

export interface JobSpec<K extends TaskName = TaskName> {
  task: K;
  payload: TaskPayloads[K];
  /** Coalesces jobs: a pending job with the same key is updated instead of a second one added. */
  jobKey?: string;
  /** Default: "replace"; "preserve_run_at" keeps an earlier scheduled time. */
  jobKeyMode?: "replace" | "preserve_run_at";
  /** Default: now. */
  runAt?: Date;
  /** Default: DEFAULT_MAX_ATTEMPTS. */
  maxAttempts?: number;
  /** graphile-worker's priority: jobs with a lower number are picked first. Default: 0. */
  priority?: number;
  /** The merchant whose API calls the job makes: flags it so a paused merchant's jobs are not picked. */
  merchantId?: string;
  flags?: string[];
  /** Jobs of one named queue run one at a time, in order. Default: none (any free slot). */
  queueName?: string;
}

/**
 * Adds a job in the caller's transaction (graphile_worker.add_job on the same connection), so the job and
 * the state change that calls for it commit together.
 */
export async function enqueueJob<K extends TaskName>(
  sql: Sql | TransactionSql,
  spec: JobSpec<K>,
): Promise<void> {
  const flags = [...(spec.flags ?? []), ...(spec.merchantId ? [merchantFlag(spec.merchantId)] : [])];
  await sql`
    select graphile_worker.add_job(
      ${spec.task},
      ${JSON.stringify(spec.payload)}::text::json,
      queue_name => ${spec.queueName ?? null}::text,
      run_at => ${spec.runAt ?? null}::timestamptz,
      max_attempts => ${spec.maxAttempts ?? DEFAULT_MAX_ATTEMPTS},
      job_key => ${spec.jobKey ?? null}::text,
      priority => ${spec.priority ?? 0}::int,
      flags => ${flags.length > 0 ? flags : null}::text[],
      job_key_mode => ${spec.jobKeyMode ?? "replace"}
    )`;
}

/**
 * Puts the running job back at `runAt` as a fresh job (attempts 0) and lets the current one complete: a
 * 429 or a shutdown is not a failure, so it must not burn an attempt. A pending job with the same key
 * gets the later time; the running one's key is released by graphile-worker, so nothing is lost.
 */
export async function rescheduleJob(sql: Sql | TransactionSql, job: Job, runAt: Date): Promise<void> {
  await sql`
    select graphile_worker.add_job(
      ${job.task_identifier},
      ${JSON.stringify(job.payload ?? {})}::text::json,
      run_at => ${runAt}::timestamptz,
      max_attempts => ${job.max_attempts},
      job_key => ${job.key ?? null}::text,
      priority => ${job.priority},
      flags => ${job.flags ? Object.keys(job.flags) : null}::text[],
      job_key_mode => 'replace'
    )`;
}
