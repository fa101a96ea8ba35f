import type { Logger } from "@loops-sync/config";
import type { Sql } from "@loops-sync/db";
import type { SyncApi } from "@loops-sync/loops-client";
import type { PauseBackoff } from "@loops-sync/replica";
import type { WorkerMetrics } from "./worker-metrics.ts";

/** What every task shares: the pool, the API client and where to report. */
export interface WorkerContext {
  sql: Sql;
  client: SyncApi;
  logger: Logger;
  metrics: WorkerMetrics;
  /** Our LOOPS_APPLICATION_ID: events it originated are ignored (the inbox usually did so already). */
  applicationId: string | undefined;
  /** How long a paused scope waits between probes (upstream-pause.ts). */
  pauseBackoff: PauseBackoff;
}
