import { countUnfinishedRunOverrun, enqueueJob, startScheduledTick } from "@loops-sync/replica";
import type { Task } from "graphile-worker";
import type { WorkerContext } from "../worker-context.ts";

/**
 * The reconcile's jobs come after every other job that is due: an event's refresh never waits behind
 * thousands of merchants' reconciles (graphile-worker picks lower numbers first).
 */
export const RECONCILE_PRIORITY = 10;

/** The row of sync.scheduled_ticks that records the reconcile's runs. */
export const RECONCILE_TICK = "reconcile";

/**
 * refresh_resources (at start and on RECONCILE_CRON): one reconcile_merchant per active merchant, and one
 * refresh_channels through the first of them. Keyed, so several workers starting at once, or a
 * cron tick landing on a pending refresh, add nothing twice. The run is recorded in sync.scheduled_ticks: each
 * merchant's job counts itself done, the last one ends the run, and a run still going when the next starts
 * counts as an overrun (the metric, `status` and the page show it). Their calls wait for the shared request
 * budget at background priority, so the run spreads itself over as long as the budget needs.
 */
export function refreshResourcesTask(ctx: WorkerContext, cron: string): Task {
  const { sql, metrics } = ctx;
  return async function refreshResources() {
    await countUnfinishedRunOverrun(sql, RECONCILE_TICK);
    const merchants = await sql<{ id: string }[]>`
      select id from sync.merchants where status = 'active' order by id`;
    const tick = await startScheduledTick(sql, { task: RECONCILE_TICK, cron, items: merchants.length });
    if (merchants.length === 0) await tick.finish();
    await sql.begin(async (tx) => {
      for (const { id } of merchants) {
        await enqueueJob(tx, {
          task: "reconcile_merchant",
          payload: { merchantId: id, tick: true },
          merchantId: id,
          jobKey: `reconcile:${id}`,
          jobKeyMode: "preserve_run_at",
          priority: RECONCILE_PRIORITY,
        });
      }
      const first = merchants[0];
      if (first) {
        await enqueueJob(tx, {
          task: "refresh_channels",
          payload: { merchantId: first.id },
          merchantId: first.id,
          jobKey: "channels",
          jobKeyMode: "preserve_run_at",
          priority: RECONCILE_PRIORITY,
        });
      }
    });
    metrics.jobs.inc({ task: "refresh_resources", result: "success" });
  };
}
