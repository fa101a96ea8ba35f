import { Counter, Histogram, Registry } from "prom-client";

export interface WorkerMetrics {
  registry: Registry;
  /** Jobs finished, by task and result (success, rescheduled, revoked, failed_permanently, error). */
  jobs: Counter<"task" | "result">;
  /** Seconds a job ran, by task. */
  jobSeconds: Histogram<"task">;
  /** Events settled by process_events, by outcome (dispatched means handed to a refresh job). */
  events: Counter<"outcome">;
  /** Upstream calls that failed, by how the worker treated them. */
  upstreamFailures: Counter<"kind">;
  /** Orders written by the version gate, by whether the row changed. */
  orderApplies: Counter<"changed">;
  /** Seconds a fetched order refresh spent in each stage: queued, fetch, commit (see the metric's help). */
  orderRefreshStage: Histogram<"stage">;
  /** Seconds from an order event's queue row being stored to its order committed in the replica. */
  orderRefreshLag: Histogram;
}

/** Stage boundaries for order refreshes: the 20 ms of a typical API answer and the 100 ms a user notices. */
const ORDER_REFRESH_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

/** Worker metrics on `registry` (Default: a registry of their own, so two workers in one process never clash). */
export function createWorkerMetrics(registry: Registry = new Registry()): WorkerMetrics {
  const existing = registry.getSingleMetric("loops_sync_worker_jobs_total");
  if (existing) {
    // The same registry handed to a second worker in one process: share the series.
    return {
      registry,
      jobs: existing as Counter<"task" | "result">,
      jobSeconds: registry.getSingleMetric("loops_sync_worker_job_duration_seconds") as Histogram<"task">,
      events: registry.getSingleMetric("loops_sync_worker_events_total") as Counter<"outcome">,
      upstreamFailures: registry.getSingleMetric(
        "loops_sync_worker_upstream_failures_total",
      ) as Counter<"kind">,
      orderApplies: registry.getSingleMetric("loops_sync_worker_order_applies_total") as Counter<"changed">,
      orderRefreshStage: registry.getSingleMetric(
        "loops_sync_worker_order_refresh_stage_seconds",
      ) as Histogram<"stage">,
      orderRefreshLag: registry.getSingleMetric("loops_sync_worker_order_refresh_lag_seconds") as Histogram,
    };
  }
  return {
    registry,
    jobs: new Counter({
      name: "loops_sync_worker_jobs_total",
      help: "Worker jobs finished, by task and result",
      labelNames: ["task", "result"],
      registers: [registry],
    }),
    jobSeconds: new Histogram({
      name: "loops_sync_worker_job_duration_seconds",
      help: "Time a worker job ran, by task",
      labelNames: ["task"],
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
      registers: [registry],
    }),
    events: new Counter({
      name: "loops_sync_worker_events_total",
      help: "Events settled by the worker (process_events and order batches), by outcome",
      labelNames: ["outcome"],
      registers: [registry],
    }),
    upstreamFailures: new Counter({
      name: "loops_sync_worker_upstream_failures_total",
      help: "Failed Loops API calls, by how the worker treated them",
      labelNames: ["kind"],
      registers: [registry],
    }),
    orderApplies: new Counter({
      name: "loops_sync_worker_order_applies_total",
      help: "Orders passed through the version gate, by whether the row changed",
      labelNames: ["changed"],
      registers: [registry],
    }),
    orderRefreshStage: new Histogram({
      name: "loops_sync_worker_order_refresh_stage_seconds",
      help:
        "Time a fetched order refresh spent in each stage: queued (its event stored until a batch claimed it), " +
        "fetch (claimed until the answer was checked, with the wait for a call slot), commit (answered until " +
        "committed in the replica, with the wait for the applier)",
      labelNames: ["stage"],
      buckets: ORDER_REFRESH_BUCKETS,
      registers: [registry],
    }),
    orderRefreshLag: new Histogram({
      name: "loops_sync_worker_order_refresh_lag_seconds",
      help: "Time from an order event being stored to its order committed in the replica (the stages' sum)",
      buckets: ORDER_REFRESH_BUCKETS,
      registers: [registry],
    }),
  };
}
