import { enqueueJob } from "@loops-sync/replica";
import type { Task } from "graphile-worker";
import type { WorkerContext } from "./worker-context.ts";

/**
 * refresh_resources (at start and on RECONCILE_CRON): one reconcile_merchant per active merchant, and one
 * refresh_channels through the first of them. Keyed, so several workers starting at once, or a
 * cron tick landing on a pending refresh, add nothing twice.
 */
export function refreshResourcesTask(ctx: WorkerContext): Task {
  const { sql, metrics } = ctx;
  return async function refreshResources() {
    await sql.begin(async (tx) => {
      const merchants = await tx<{ id: string }[]>`
        select id from sync.merchants where status = 'active' order by id`;
      for (const { id } of merchants) {
        const base = { payload: { merchantId: id }, merchantId: id, jobKeyMode: "preserve_run_at" } as const;
        await enqueueJob(tx, { ...base, task: "reconcile_merchant", jobKey: `reconcile:${id}` });
      }
      const first = merchants[0];
      if (first) {
        await enqueueJob(tx, {
          task: "refresh_channels",
          payload: { merchantId: first.id },
          merchantId: first.id,
          jobKey: "channels",
          jobKeyMode: "preserve_run_at",
        });
      }
    });
    metrics.jobs.inc({ task: "refresh_resources", result: "success" });
  };
}
