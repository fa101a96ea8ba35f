import type { Logger } from "@loops-sync/config";
import type { Sql, TaskPayloads } from "@loops-sync/db";
import type { SyncApi } from "@loops-sync/loops-client";
import {
  enqueueJob,
  nextCronTick,
  type PauseBackoff,
  type ScheduledTick,
  startScheduledTick,
} from "@loops-sync/replica";
import type { TaskList } from "graphile-worker";
import { listActiveMerchants } from "./list-active-merchants.ts";
import { listDueCatchups } from "./list-due-catchups.ts";
import { runCatchup } from "./run-catchup.ts";

/** Payload of the `catchup` task: one merchant, or every active one when absent. */
export type CatchupPayload = TaskPayloads["catchup"];

export interface CatchupTaskOptions {
  sql: Sql;
  client: SyncApi;
  /** LOOPS_APPLICATION_ID. Default: none. */
  applicationId?: string | undefined;
  /** LOOPS_MERCHANT_IDS. Default: []. */
  merchantIds?: readonly string[];
  /** CATCHUP_CRON: a whole run should end before its next tick; one that does not is recorded as overran. */
  cron?: string;
  /** Merchants caught up at once. Default: 8. */
  concurrency?: number;
  /** How long a scope paused by a refusal of Loops waits between probes. Default: DEFAULT_PAUSE_BACKOFF. */
  pauseBackoff?: PauseBackoff;
  /** Default: none. */
  logger?: Logger;
}

/** The job key shared by the cron line, the run at start and `scheduleCatchup`, so runs never pile up. */
const JOB_KEY = "catchup";
/** Whole runs go through this graphile-worker queue: one at a time, so a slow one is followed, never overlapped. */
const QUEUE = "catchup_ticks";
/** A failed run is retried this often before the next cron tick takes over. */
const MAX_ATTEMPTS = 3;

/**
 * The graphile-worker task `catchup`, for the worker's jobs (apps/worker/src/jobs/worker-jobs.ts): one
 * merchant (the worker's catch-up trickle queues each at its offset in CATCHUP_CRON's interval,
 * apps/worker/src/reconcile/pace-background.ts), or a run over every merchant (a start's, over the due ones).
 * It throws when a merchant's run failed, so the failure is visible in the queue (and retried); the cursor
 * keeps the progress made.
 */
export function catchupTasks({
  sql,
  client,
  applicationId,
  merchantIds = [],
  cron = "*/5 * * * *",
  concurrency = 8,
  pauseBackoff,
  logger,
}: CatchupTaskOptions): TaskList {
  return {
    async catchup(rawPayload, helpers) {
      const merchantId = (rawPayload as CatchupPayload | null)?.merchantId;
      // A start's run: only the merchants whose last complete catch-up is older than the cron's interval.
      let due: string[] | undefined;
      if ((rawPayload as CatchupPayload | null)?.dueOnly && typeof merchantId !== "string") {
        const first = nextCronTick(cron, new Date());
        const second = first && nextCronTick(cron, first);
        // A cron rarer than weekly (nextCronTick looks 8 days ahead): a run within a year is recent.
        const cronMs = first && second ? second.getTime() - first.getTime() : 366 * 24 * 3600 * 1000;
        // The trickle's interval when it stretched (the merchants do not fit the share): recent is within it.
        const [row] = await sql<{ ms: number | null }[]>`
          select effective_interval_seconds * 1000 as ms from sync.scheduled_ticks where task = 'catchup'`;
        due = await listDueCatchups(sql, merchantIds, Math.max(cronMs, row?.ms ?? 0));
        if (due.length === 0) {
          // Said all the same, so an operator (and a test) sees the start's run end, at no call to Loops.
          logger?.info(
            { merchants: 0, eventsStored: 0, apiCalls: 0, nothingDue: true },
            "catch-up run finished",
          );
          return;
        }
      }
      // A run over every merchant (or a start's due ones) is a tick of CATCHUP_CRON: recorded, so an overrun shows.
      let tick: ScheduledTick | undefined;
      if (typeof merchantId !== "string") {
        const merchants = due ?? (await listActiveMerchants(sql, merchantIds));
        tick = await startScheduledTick(sql, { task: "catchup", cron, items: merchants.length });
      }
      const paced = (rawPayload as CatchupPayload | null)?.paced === true;
      const result = await runCatchup({
        sql,
        client,
        applicationId,
        merchantIds,
        concurrency,
        ...(typeof merchantId === "string" ? { merchantId } : {}),
        ...(due ? { merchants: due } : {}),
        onMerchantDone: () => tick?.itemDone(),
        ...(pauseBackoff ? { pauseBackoff } : {}),
        signal: helpers.abortSignal,
        ...(logger ? { logger } : {}),
      });
      const ended = await tick?.finish();
      if (ended?.overran) {
        logger?.warn(
          { durationSeconds: ended.durationSeconds, merchants: result.merchants.length },
          "catch-up run took longer than CATCHUP_CRON's interval; raise LOOPS_MAX_RPS or space the schedule",
        );
      }
      const finished = {
        merchants: result.merchants.length,
        eventsStored: result.eventsStored,
        apiCalls: result.apiCalls,
        callsPerStoredEvent: result.callsPerStoredEvent,
      };
      // A trickle's turn (one merchant, several a second at thousands of merchants) is no news.
      if (paced) logger?.debug(finished, "catch-up run finished");
      else logger?.info(finished, "catch-up run finished");
      if (result.failed.length > 0) {
        const reasons = result.merchants.filter((m) => m.error).map((m) => `${m.merchantId}: ${m.error}`);
        throw new Error(`catch-up failed for ${result.failed.join(", ")} (${reasons.join("; ")})`);
      }
    },
  };
}

/**
 * The crontab line (graphile-worker syntax) running `catchup` on `cron` (CATCHUP_CRON), for
 * the worker's crontab (apps/worker/src/jobs/worker-jobs.ts). Default: every 5 minutes.
 */
export function catchupCrontab(cron = "*/5 * * * *"): string {
  if (cron.trim().split(/\s+/).length !== 5) {
    throw new RangeError(
      `CATCHUP_CRON: expected 5 cron fields like "*/5 * * * *", got ${JSON.stringify(cron)}`,
    );
  }
  return `${cron.trim()} catchup ?jobKey=${JOB_KEY}&jobKeyMode=preserve_run_at&max=${MAX_ATTEMPTS}&queue=${QUEUE}`;
}

/** Adds a `catchup` job now (once the worker has started, `{ dueOnly: true }`: the run at start). */
export async function scheduleCatchup(sql: Sql, payload: CatchupPayload = {}): Promise<void> {
  // A start's run (dueOnly) shares the cron's key: a tick already queued covers it.
  const key = payload.merchantId ? `${JOB_KEY}:${payload.merchantId}` : JOB_KEY;
  await enqueueJob(sql, {
    task: "catchup",
    payload,
    jobKey: key,
    jobKeyMode: "preserve_run_at",
    maxAttempts: MAX_ATTEMPTS,
    ...(payload.merchantId ? {} : { queueName: QUEUE }),
  });
}
