import type { Logger } from "@loops-sync/config";
import type { Sql, TaskPayloads } from "@loops-sync/db";
import { enqueueJob, type PauseBackoff } from "@loops-sync/replica";
import type { TaskList } from "graphile-worker";
import type { CatchupApi } from "./catchup-api.ts";
import { runCatchup } from "./run-catchup.ts";

/** Payload of the `catchup` task: one merchant, or every active one when absent. */
export type CatchupPayload = TaskPayloads["catchup"];

export interface CatchupTaskOptions {
  sql: Sql;
  client: CatchupApi;
  /** LOOPS_APPLICATION_ID. Default: none. */
  applicationId?: string | undefined;
  /** LOOPS_MERCHANT_IDS. Default: []. */
  merchantIds?: readonly string[];
  /** How long a scope paused by a refusal of Loops waits between probes. Default: 30 s up to 15 min. */
  pauseBackoff?: PauseBackoff;
  /** Default: none. */
  logger?: Logger;
}

/** The job key shared by the cron line, the run at start and `scheduleCatchup`, so runs never pile up. */
const JOB_KEY = "catchup";
/** A failed run is retried this often before the next cron tick takes over. */
const MAX_ATTEMPTS = 3;

/**
 * The graphile-worker task `catchup`, for `startWorker({ extraTasks })`. It throws when a merchant's run
 * failed, so the failure is visible in the queue (and retried); the cursor keeps the progress made.
 */
export function catchupTasks({
  sql,
  client,
  applicationId,
  merchantIds = [],
  pauseBackoff,
  logger,
}: CatchupTaskOptions): TaskList {
  return {
    async catchup(rawPayload, helpers) {
      const merchantId = (rawPayload as CatchupPayload | null)?.merchantId;
      const result = await runCatchup({
        sql,
        client,
        applicationId,
        merchantIds,
        ...(typeof merchantId === "string" ? { merchantId } : {}),
        ...(pauseBackoff ? { pauseBackoff } : {}),
        signal: helpers.abortSignal,
        ...(logger ? { logger } : {}),
      });
      logger?.info(
        {
          merchants: result.merchants.length,
          eventsStored: result.eventsStored,
          apiCalls: result.apiCalls,
          callsPerStoredEvent: result.callsPerStoredEvent,
        },
        "catch-up run finished",
      );
      if (result.failed.length > 0) {
        const reasons = result.merchants.filter((m) => m.error).map((m) => `${m.merchantId}: ${m.error}`);
        throw new Error(`catch-up failed for ${result.failed.join(", ")} (${reasons.join("; ")})`);
      }
    },
  };
}

/**
 * The crontab line (graphile-worker syntax) running `catchup` on `cron` (CATCHUP_CRON), for
 * `startWorker({ extraCrontab })`. Default: every 5 minutes.
 */
export function catchupCrontab(cron = "*/5 * * * *"): string {
  if (cron.trim().split(/\s+/).length !== 5) {
    throw new RangeError(
      `CATCHUP_CRON: expected 5 cron fields like "*/5 * * * *", got ${JSON.stringify(cron)}`,
    );
  }
  return `${cron.trim()} catchup ?jobKey=${JOB_KEY}&jobKeyMode=preserve_run_at&max=${MAX_ATTEMPTS}`;
}

/** Adds a `catchup` job now (call it once the worker has started, for the run at start). */
export async function scheduleCatchup(sql: Sql, payload: CatchupPayload = {}): Promise<void> {
  const key = payload.merchantId ? `${JOB_KEY}:${payload.merchantId}` : JOB_KEY;
  await enqueueJob(sql, {
    task: "catchup",
    payload,
    jobKey: key,
    jobKeyMode: "preserve_run_at",
    maxAttempts: MAX_ATTEMPTS,
  });
}
