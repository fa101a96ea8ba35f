import type { Database } from "@loops-sync/schema";
import type { ColumnType } from "kysely";

type Timestamp = ColumnType<Date, never, never>;

/** The columns of graphile-worker's tables that the status reads (graphile-worker owns their schema). */
interface GraphileWorkerJobs {
  id: number;
  task_identifier: string;
  payload: unknown;
  run_at: Timestamp;
  attempts: number;
  max_attempts: number;
  last_error: string | null;
  locked_at: Timestamp | null;
  updated_at: Timestamp;
}

/** Our schemas plus the graphile-worker tables the status page counts. */
export interface StatusDatabase extends Database {
  "graphile_worker.jobs": GraphileWorkerJobs;
  "graphile_worker._private_jobs": GraphileWorkerJobs;
}
