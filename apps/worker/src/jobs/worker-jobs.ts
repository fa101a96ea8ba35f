import { catchupCrontab, catchupTasks } from "@loops-sync/catchup";
import type { Logger } from "@loops-sync/config";
import type { TaskName } from "@loops-sync/db";
import type { SyncApi } from "@loops-sync/loops-client";
import type { Task, TaskList } from "graphile-worker";
import { processEventsTask } from "../events/process-events-task.ts";
import { confirmMerchantTask } from "../merchants/confirm-merchant-task.ts";
import {
  probeRevokedTask,
  REVOKED_PROBE_CRON,
  revokedProbeCrontab,
} from "../merchants/probe-revoked-task.ts";
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

/** CATCHUP_CRON's default. */
export const CATCHUP_CRON = "*/5 * * * *";

/** Catch-up from the event log, run by the worker (the `catchup` task of packages/catchup). */
export interface CatchupJobOptions {
  /** The client catch-up reads the event log and orders with (the worker's own, in `loops-sync worker`). */
  client: SyncApi;
  /** CATCHUP_CRON: each merchant is caught up once per its interval, at its own offset. Default: every 5 minutes. */
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
  /** RECONCILE_CRON: each active merchant's mirrored resources are reconciled once per its interval. */
  resourcesCron: string;
  /** LOOPS_MAX_RPS: the trickle's interval stretches when the merchants do not fit its share. Default: none. */
  maxRps?: number | undefined;
  /** RECONCILE_BUDGET_SHARE. Default: 0.5. */
  reconcileShare?: number | undefined;
  /** LOOPS_MERCHANT_IDS, for catch-up's list of merchants. */
  merchantIds: readonly string[];
  /** Default: off. */
  catchup?: CatchupJobOptions | undefined;
  /** Default: off. */
  prune?: PruneJobOptions | undefined;
  /** REVOKED_PROBE_CRON: when each revoked merchant's GET /connection is asked. Default: hourly. */
  revokedProbeCron?: string | undefined;
}

/** What graphile-worker runs: every task by name, and the crontab that schedules some of them. */
export interface WorkerJobs {
  taskList: TaskList;
  crontab: string;
}

/**
 * Every task the worker runs and its crontab, in one place: the event, order and resource tasks, the
 * trickles' steps (the reconcile's and catch-up's, not cron lines), and (when asked) the daily prune. With tracing
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
    refresh_resources: refreshResourcesTask(ctx, {
      cron: options.resourcesCron,
      catchupCron: options.catchup ? (options.catchup.cron ?? CATCHUP_CRON) : undefined,
      maxRps: options.maxRps,
      share: options.reconcileShare,
    }),
  };
  const taskList: TaskList = { ...own };
  // The reconcile and catch-up are no cron lines: each worker steps their trickles (reconcile/background-pacer.ts).
  const crontab: string[] = [];
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
    // Only checked: CATCHUP_CRON sets the catch-up trickle's interval, it queues no run over every merchant.
    catchupCrontab(catchup.cron);
  }
  taskList.probe_revoked = probeRevokedTask(ctx);
  crontab.push(revokedProbeCrontab(options.revokedProbeCron ?? REVOKED_PROBE_CRON));
  if (prune) {
    taskList.prune = pruneTask({ sql, retentionDays: prune.retentionDays, logger: prune.logger });
    crontab.push(PRUNE_CRONTAB);
  }
  return { taskList: traceJobs(sql, taskList), crontab: crontab.join("\n") };
}
