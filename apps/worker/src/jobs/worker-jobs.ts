import { catchupCrontab, catchupTasks } from "@loops-sync/catchup";
import type { Logger } from "@loops-sync/config";
import type { TaskName } from "@loops-sync/db";
import type { SyncApi } from "@loops-sync/loops-client";
import type { Task, TaskList } from "graphile-worker";
import { processEventsTask } from "../events/process-events-task.ts";
import { confirmMerchantTask } from "../merchants/confirm-merchant-task.ts";
import { refreshGoLiveTask, refreshMerchantTask } from "../merchants/refresh-merchant-task.ts";
import { refreshBrandTask } from "../mirror/refresh-brand-task.ts";
import { refreshJobTask } from "../mirror/refresh-job-task.ts";
import { refreshChannelsTask, refreshLocationsTask } from "../mirror/refresh-locations-task.ts";
import { refreshOrderTask } from "../orders/refresh-order-task.ts";
import { PRUNE_CRONTAB, pruneTask } from "../prune-task.ts";
import { reconcileMerchantTask } from "../reconcile/reconcile-merchant-task.ts";
import { refreshResourcesTask } from "../reconcile/refresh-resources-task.ts";
import type { WorkerContext } from "../worker-context.ts";
import { traceJobs } from "./trace-jobs.ts";

/** Catch-up from the event log, run by the worker (the `catchup` task of packages/catchup). */
export interface CatchupJobOptions {
  /** The client catch-up reads the event log and orders with (the worker's own, in `loops-sync worker`). */
  client: SyncApi;
  /** CATCHUP_CRON. Default: every 5 minutes. */
  cron?: string;
  /** Merchants caught up at once. Default: 8. */
  concurrency?: number;
  /** Default: none. */
  logger?: Logger;
}

/** The daily prune of finished rows (`loops-sync prune`, at 03:30 UTC). */
export interface PruneJobOptions {
  /** RETENTION_DAYS: rows in a final state older than this are deleted. */
  retentionDays: number;
  logger: Logger;
}

export interface WorkerJobsOptions {
  /** RECONCILE_CRON: when every mirrored resource of every active merchant is reconciled. */
  resourcesCron: string;
  /** LOOPS_MERCHANT_IDS, for catch-up's list of merchants. */
  merchantIds: readonly string[];
  /** Default: off. */
  catchup?: CatchupJobOptions | undefined;
  /** Default: off. */
  prune?: PruneJobOptions | undefined;
}

/** What graphile-worker runs: every task by name, and the crontab that schedules some of them. */
export interface WorkerJobs {
  taskList: TaskList;
  crontab: string;
}

/**
 * Every task the worker runs and its crontab, in one place: the event, order and resource tasks, the
 * reconcile on RECONCILE_CRON, and (when asked) catch-up on CATCHUP_CRON and the daily prune. With tracing
 * on, each job run is a span of its own (trace-jobs.ts).
 */
export function workerJobs(ctx: WorkerContext, options: WorkerJobsOptions): WorkerJobs {
  const { sql, applicationId, pauseBackoff } = ctx;
  const own: Record<Exclude<TaskName, "catchup">, Task> = {
    process_events: processEventsTask(ctx),
    refresh_order: refreshOrderTask(ctx),
    refresh_locations: refreshLocationsTask(ctx),
    refresh_channels: refreshChannelsTask(ctx),
    refresh_merchant: refreshMerchantTask(ctx),
    refresh_job: refreshJobTask(ctx),
    refresh_brand: refreshBrandTask(ctx),
    refresh_go_live: refreshGoLiveTask(ctx),
    confirm_merchant: confirmMerchantTask(ctx),
    reconcile_merchant: reconcileMerchantTask(ctx),
    refresh_resources: refreshResourcesTask(ctx, options.resourcesCron),
  };
  const taskList: TaskList = { ...own };
  const crontab = [
    `${options.resourcesCron} refresh_resources ?jobKey=refresh_resources&jobKeyMode=preserve_run_at`,
  ];
  const { catchup, prune } = options;
  if (catchup) {
    Object.assign(
      taskList,
      catchupTasks({
        sql,
        client: catchup.client,
        applicationId,
        merchantIds: options.merchantIds,
        pauseBackoff,
        ...(catchup.cron ? { cron: catchup.cron } : {}),
        ...(catchup.concurrency ? { concurrency: catchup.concurrency } : {}),
        ...(catchup.logger ? { logger: catchup.logger } : {}),
      }),
    );
    crontab.push(catchupCrontab(catchup.cron));
  }
  if (prune) {
    taskList.prune = pruneTask({ sql, retentionDays: prune.retentionDays, logger: prune.logger });
    crontab.push(PRUNE_CRONTAB);
  }
  return { taskList: traceJobs(sql, taskList), crontab: crontab.join("\n") };
}
