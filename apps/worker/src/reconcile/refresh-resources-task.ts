import type { Task } from "graphile-worker";
import type { WorkerContext } from "../worker-context.ts";
import { type PaceOptions, paceBackground } from "./pace-background.ts";

export { RECONCILE_PRIORITY, RECONCILE_TICK } from "./pace-background.ts";

/**
 * refresh_resources: one step of the background trickles (pace-background.ts). The worker steps them
 * itself (background-pacer.ts) and no longer has it on its crontab; a 0.1.0 worker beside it during a rolling
 * deploy still queues this job on RECONCILE_CRON, and then it queues only the merchants that are due, not
 * every merchant at the tick.
 */
export function refreshResourcesTask(ctx: WorkerContext, options: PaceOptions): Task {
  const { metrics } = ctx;
  return async function refreshResources() {
    await paceBackground(ctx, options);
    metrics.jobs.inc({ task: "refresh_resources", result: "success" });
  };
}
