import { EVENT_OUTCOMES } from "@loops-sync/db";
import { type BoundedLabel, boundedLabel } from "@loops-sync/webhooks";
import { Counter, Histogram, type LabelValues, Registry } from "prom-client";

export interface WorkerMetrics {
  registry: Registry;
  /** Jobs finished, by task and result (success, rescheduled, paused, revoked, failed_permanently, error). */
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

/** Stage boundaries for order refreshes: fine around one API answer, and at the 100 ms a user notices. */
const ORDER_REFRESH_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

/**
 * The label values each label may take. Values come from code, from stored rows (`outcome`) and from
 * upstream answers; one outside these, past a few learned ones, is counted as `other`, so a new value from
 * a row or an answer can never grow the series without bound.
 */
const KNOWN_LABELS: Record<string, readonly string[]> = {
  task: [
    "process_events",
    "refresh_order",
    "refresh_orders",
    "refresh_job",
    "refresh_merchant",
    "refresh_locations",
    "refresh_channels",
    "refresh_resources",
  ],
  result: [
    "success",
    "error",
    "malformed",
    "revoked",
    "rescheduled",
    "released",
    "failed_permanently",
    "paused",
  ],
  outcome: [...EVENT_OUTCOMES, "dispatched"],
  kind: ["rate_limited", "revoked", "paused", "permanent", "transient"],
  changed: ["true", "false"],
  stage: ["queued", "fetch", "commit"],
};
/** Values beyond the known ones that still get a series of their own, per label. */
const LEARNED_LABEL_CAP = 10;

type Labelled = {
  inc?: (...args: never[]) => void;
  observe?: (...args: never[]) => void;
  startTimer?: (labels?: LabelValues<string>) => (labels?: LabelValues<string>) => number;
  labels?: (...args: never[]) => unknown;
};

/**
 * Makes every write to `metric` map its label values through the bounds first (prom-client has no hook for
 * it, so its writers are wrapped on this one instance).
 */
function boundLabels<M>(metric: M, names: readonly string[]): M {
  const bounds = new Map<string, BoundedLabel>(
    names.map((name) => [name, boundedLabel(KNOWN_LABELS[name] ?? [], LEARNED_LABEL_CAP)]),
  );
  const bound = (labels: unknown) => {
    if (typeof labels !== "object" || labels === null) return labels;
    const out: Record<string, unknown> = { ...labels };
    for (const [name, toLabel] of bounds) if (name in out) out[name] = toLabel(String(out[name]));
    return out;
  };
  const m = metric as Labelled;
  for (const method of ["inc", "observe"] as const) {
    const original = m[method]?.bind(metric) as ((a?: unknown, b?: unknown) => void) | undefined;
    if (original)
      (m as Record<string, unknown>)[method] = (a?: unknown, b?: unknown) => original(bound(a), b);
  }
  const startTimer = m.startTimer?.bind(metric);
  if (startTimer) {
    m.startTimer = (labels) => {
      const end = startTimer(bound(labels) as LabelValues<string>);
      return (more) => end(bound(more) as LabelValues<string>);
    };
  }
  return metric;
}

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
    jobs: boundLabels(
      new Counter({
        name: "loops_sync_worker_jobs_total",
        help: "Worker jobs finished, by task and result",
        labelNames: ["task", "result"],
        registers: [registry],
      }),
      ["task", "result"],
    ),
    jobSeconds: boundLabels(
      new Histogram({
        name: "loops_sync_worker_job_duration_seconds",
        help: "Time a worker job ran, by task",
        labelNames: ["task"],
        buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
        registers: [registry],
      }),
      ["task"],
    ),
    events: boundLabels(
      new Counter({
        name: "loops_sync_worker_events_total",
        help: "Events settled by the worker (process_events and order batches), by outcome",
        labelNames: ["outcome"],
        registers: [registry],
      }),
      ["outcome"],
    ),
    upstreamFailures: boundLabels(
      new Counter({
        name: "loops_sync_worker_upstream_failures_total",
        help: "Failed Loops API calls, by how the worker treated them",
        labelNames: ["kind"],
        registers: [registry],
      }),
      ["kind"],
    ),
    orderApplies: boundLabels(
      new Counter({
        name: "loops_sync_worker_order_applies_total",
        help: "Orders passed through the version gate, by whether the row changed",
        labelNames: ["changed"],
        registers: [registry],
      }),
      ["changed"],
    ),
    orderRefreshStage: boundLabels(
      new Histogram({
        name: "loops_sync_worker_order_refresh_stage_seconds",
        help:
          "Time a fetched order refresh spent in each stage: queued (its event stored until a batch claimed it), " +
          "fetch (claimed until the answer was checked, with the wait for a call slot), commit (answered until " +
          "committed in the replica, with the wait for the applier)",
        labelNames: ["stage"],
        buckets: ORDER_REFRESH_BUCKETS,
        registers: [registry],
      }),
      ["stage"],
    ),
    orderRefreshLag: new Histogram({
      name: "loops_sync_worker_order_refresh_lag_seconds",
      help: "Time from an order event being stored to its order committed in the replica (the stages' sum)",
      buckets: ORDER_REFRESH_BUCKETS,
      registers: [registry],
    }),
  };
}
