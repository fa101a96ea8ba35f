import { causedBy, recordChanges } from "@loops-sync/db";
import { LoopsError } from "@loops-sync/loops-client";
import type { Task } from "graphile-worker";
import { settleRoutedEvents } from "../events/settle-events.ts";
import { openSetAsideGate, SET_ASIDE_OUTCOME } from "../upstream/set-aside-gate.ts";
import { parseIds, upstreamTask } from "../upstream/upstream-task.ts";
import type { WorkerContext } from "../worker-context.ts";
import { type JobInput, type MenuInput, upsertJob, upsertMenu } from "./upsert-job.ts";

function invalid(message: string): LoopsError {
  return new LoopsError({ kind: "bad_response", code: "invalid_response", message });
}

/**
 * refresh_job (job.completed): GET /jobs/{id}, stored; after a succeeded menu_import also the brand's menu
 * (GET /brands/{id}/menu), version-gated. Settles the job.completed events naming this job. While jobs are
 * set aside (Loops refused their scope) the events are settled failed with no call, and the job succeeds.
 */
export function refreshJobTask(ctx: WorkerContext): Task {
  const { sql, client } = ctx;
  return upstreamTask(
    {
      name: "refresh_job",
      parse: (payload) => parseIds<"refresh_job">(payload, "jobId"),
      settle: async ({ merchantId, jobId }, outcome, error) => {
        await settleRoutedEvents(sql, {
          merchantId,
          route: "job",
          jobId,
          receivedBefore: new Date(),
          outcome,
          ...(error ? { error } : {}),
        });
      },
      async run({ merchantId, jobId }, state, helpers) {
        const api = client.forMerchant(merchantId);
        const options = { signal: helpers.abortSignal };
        const gate = await openSetAsideGate(sql, merchantId, { logger: ctx.logger });
        const read = await gate.read("jobs", async () => ({ job: await api.jobs.get(jobId, options) }));
        if (!read) {
          await settleRoutedEvents(sql, {
            merchantId,
            route: "job",
            jobId,
            receivedBefore: state.now,
            outcome: "failed",
            error: SET_ASIDE_OUTCOME("jobs"),
          });
          return;
        }
        const job = read.job as Partial<JobInput & { brand_id: string | null }> | null;
        if (!job || job.id !== jobId || typeof job.type !== "string" || typeof job.status !== "string") {
          throw invalid(`GET /jobs/${jobId} answered a body without a matching id, type and status`);
        }
        let menu: MenuInput | undefined;
        if (job.type === "menu_import" && job.status === "succeeded" && typeof job.brand_id === "string") {
          const brandId = job.brand_id;
          const got = await gate.read("menus", async () => ({ menu: await api.menus.get(brandId, options) }));
          const read = got?.menu as Partial<MenuInput> | null | undefined;
          if (got && (!read || typeof read.brand_id !== "string" || !Number.isSafeInteger(read.version))) {
            throw invalid(`GET /brands/${job.brand_id}/menu answered a body without brand_id and version`);
          }
          if (got) menu = read as MenuInput;
        }
        await sql.begin(async (tx) => {
          const changes = [
            ...(await upsertJob(tx, merchantId, job as JobInput)),
            ...(menu ? await upsertMenu(tx, merchantId, menu) : []),
          ];
          const settled =
            job.status !== "pending" && job.status !== "running"
              ? await settleRoutedEvents(tx, {
                  merchantId,
                  route: "job",
                  jobId,
                  receivedBefore: state.now,
                  outcome: "applied",
                })
              : null;
          await recordChanges(tx, causedBy(changes, settled?.newest ?? null));
        });
        if (job.status === "pending" || job.status === "running")
          // Retried with backoff until GET /jobs catches up with the event.
          throw new LoopsError({
            kind: "not_ready",
            code: "job_not_finished",
            message: `job ${jobId} is still ${job.status} upstream although job.completed was received`,
          });
      },
    },
    ctx,
  );
}
