import { pauseMerchant, type TaskName, type TaskPayloads } from "@loops-sync/db";
import {
  classifyUpstreamFailure,
  enterPause,
  type MerchantState,
  readMerchantState,
  rescheduleJob,
  revokeMerchantAndRecord,
} from "@loops-sync/replica";
import type { JobHelpers, Task } from "graphile-worker";
import type { WorkerContext } from "../worker-context.ts";
import { recordSetAside, SET_ASIDE_OUTCOME } from "./set-aside-gate.ts";

/** A task that calls Loops for one merchant; `upstreamTask` wraps it in the etiquette every such task shares. */
export interface UpstreamTaskSpec<K extends TaskName> {
  name: K;
  /** Checks the stored payload; undefined drops the job with an error log (a retry would not fix it). */
  parse(payload: unknown): (TaskPayloads[K] & { merchantId: string }) | undefined;
  /** The work, called only while the merchant is neither revoked nor paused. */
  run(payload: TaskPayloads[K], state: MerchantState, helpers: JobHelpers): Promise<void>;
  /** Settles the events this job answers when it ends without success: failed (with the error) or skipped_revoked. */
  settle(payload: TaskPayloads[K], outcome: "failed" | "skipped_revoked", error?: string): Promise<void>;
}

const text = (v: unknown): v is string => typeof v === "string" && v.length > 0;

/** Payload check shared by the tasks whose payload is `{ merchantId, ...strings }`. */
export function parseIds<K extends TaskName>(
  payload: unknown,
  ...fields: string[]
): TaskPayloads[K] | undefined {
  if (typeof payload !== "object" || payload === null) return undefined;
  const p = payload as Record<string, unknown>;
  return ["merchantId", ...fields].every((f) => text(p[f])) ? (p as TaskPayloads[K]) : undefined;
}

/**
 * Wraps an upstream task: a revoked merchant's job finishes without calls; a paused merchant's job moves to
 * the end of the pause. A failure is handled by its kind (which error is which kind: classifyUpstreamFailure):
 * `rate_limited` pauses the merchant and moves the job without burning an attempt (docs/decisions.md, "A 429
 * does not burn an attempt"); `revoked` revokes; `paused` pauses its scope (upstream-pause.ts) and moves the
 * job to the next probe; `set_aside` (a scope refused for an extra resource, off the hot path) records the
 * resource as set aside, settles the events as failed and succeeds; `permanent` settles the events as failed; `transient` is thrown for graphile-worker's
 * backoff, and on the last attempt the events are settled as failed while the job stays in
 * graphile_worker.jobs to be re-run. A shutdown that aborts the call puts the job back at once.
 */
export function upstreamTask<K extends TaskName>(spec: UpstreamTaskSpec<K>, ctx: WorkerContext): Task {
  const { sql, logger, metrics } = ctx;
  return async function upstreamJob(rawPayload, helpers) {
    const stop = metrics.jobSeconds.startTimer({ task: spec.name });
    const done = (result: string) => {
      stop();
      metrics.jobs.inc({ task: spec.name, result });
    };
    const payload = spec.parse(rawPayload);
    if (!payload) {
      logger.error({ task: spec.name, jobId: helpers.job.id }, "job payload is malformed; dropping the job");
      return done("malformed");
    }
    const { merchantId } = payload;
    const state = await readMerchantState(sql, merchantId);
    if (state.status === "revoked") {
      await spec.settle(payload, "skipped_revoked");
      return done("revoked");
    }
    if (state.pausedUntil) {
      await rescheduleJob(sql, helpers.job, state.pausedUntil);
      return done("rescheduled");
    }
    try {
      await spec.run(payload, state, helpers);
      return done("success");
    } catch (error) {
      if (helpers.abortSignal.aborted) {
        // Shutting down: hand the job back untouched rather than count an attempt.
        await rescheduleJob(sql, helpers.job, new Date());
        return done("released");
      }
      const failure = classifyUpstreamFailure(error);
      metrics.upstreamFailures.inc({ kind: failure.kind });
      switch (failure.kind) {
        case "rate_limited": {
          const until = await pauseMerchant(sql, merchantId, failure.retryAfterSeconds);
          await rescheduleJob(sql, helpers.job, until);
          logger.warn(
            { task: spec.name, merchantId, until },
            "rate limited by Loops; merchant paused until Retry-After",
          );
          return done("rescheduled");
        }
        case "paused": {
          const until = await enterPause(sql, failure, merchantId, ctx.pauseBackoff);
          await rescheduleJob(sql, helpers.job, until);
          logger.warn(
            { task: spec.name, merchantId, cause: failure.cause, scope: failure.scope, until },
            "Loops refused the call; calls paused until a probe is accepted",
          );
          return done("paused");
        }
        case "set_aside":
          await recordSetAside(sql, logger, failure, merchantId, { task: spec.name });
          await spec.settle(payload, "failed", SET_ASIDE_OUTCOME(failure.resource));
          return done("set_aside");
        case "revoked": {
          // A reconnect confirmed while the call was answered makes this refusal stale: it revokes the old
          // connection only, and the job runs again under the new one.
          const stale = await revokeMerchantAndRecord(sql, merchantId, {
            source: spec.name === "reconcile_merchant" ? "reconcile" : "webhook",
            refusedUnder: state.connectionId,
          });
          if (stale) {
            await rescheduleJob(sql, helpers.job, new Date());
            return done("rescheduled");
          }
          await spec.settle(payload, "skipped_revoked");
          logger.warn(
            { task: spec.name, merchantId },
            "connection not active: merchant marked revoked, no more calls",
          );
          return done("revoked");
        }
        case "permanent":
          await spec.settle(payload, "failed", failure.message);
          logger.warn(
            { task: spec.name, merchantId, error: failure.message },
            "upstream refused; recorded as failed",
          );
          return done("failed_permanently");
        case "transient":
          if (helpers.job.attempts >= helpers.job.max_attempts) {
            await spec.settle(
              payload,
              "failed",
              `gave up after ${helpers.job.attempts} attempts: ${String(error)}`,
            );
          }
          done("error");
          throw error;
      }
    }
  };
}
