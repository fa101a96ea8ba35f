import { version } from "@loops-sync/config";
import type { Sql } from "@loops-sync/db";
import { type MerchantBacklog, readBacklog, readLockedTooLong } from "@loops-sync/status";
import { collectDefaultMetrics, Gauge, Registry } from "prom-client";
import { registerConsumerMetrics } from "./consumer-metrics.ts";
import { registerScheduleMetrics } from "./schedule-metrics.ts";

export interface ProcessMetricsOptions {
  /** Default: a new registry. */
  registry?: Registry;
  sql: Sql;
  /** Per-merchant series only while there are at most this many active merchants; 0 turns them off. */
  merchantLabelsMax: number;
  /** Called when the backlog cannot be read at scrape time (its gauges are then left out). Default: ignore. */
  onError?: (error: unknown) => void;
}

type Figure = (b: MerchantBacklog) => number | null;

/** Backlog figures: [metric suffix, help, per-merchant figure, how the total is formed]. */
const FIGURES: Array<[string, string, Figure, "sum" | "max" | "min"]> = [
  ["orders_waiting", "Orders waiting for a fetch (sync.order_refresh)", (b) => b.ordersWaiting, "sum"],
  [
    "orders_waiting_oldest_seconds",
    "Age of the oldest order waiting for a fetch",
    (b) => b.oldestOrderWaitSeconds,
    "max",
  ],
  ["events_pending", "Stored events not yet settled", (b) => b.pendingEvents, "sum"],
  ["events_failed", "Stored events whose handling failed for good", (b) => b.failedEvents, "sum"],
  [
    "webhook_last_received_seconds",
    "Seconds since the last webhook was stored (the total: since the newest of any merchant)",
    (b) => b.secondsSinceLastWebhook,
    "min",
  ],
  [
    "catchup_cursor_age_seconds",
    "Seconds since catch-up last finished a run (the total: the stalest merchant)",
    (b) => b.catchupCursorAgeSeconds,
    "max",
  ],
];

function combine(values: number[], how: "sum" | "max" | "min"): number | undefined {
  if (values.length === 0) return how === "sum" ? 0 : undefined;
  if (how === "sum") return values.reduce((a, b) => a + b, 0);
  return how === "max" ? Math.max(...values) : Math.min(...values);
}

/**
 * What every process kind exports besides its own series: Node's `process_*` and `nodejs_*`, the build, and
 * the backlog read from Postgres at scrape time (every process shows the same figures: aggregate with max).
 */
export function registerProcessMetrics({
  registry = new Registry(),
  sql,
  merchantLabelsMax,
  onError = () => {},
}: ProcessMetricsOptions): Registry {
  collectDefaultMetrics({ register: registry });
  const registers = [registry];
  new Gauge({
    name: "loops_sync_build_info",
    help: "The running release (always 1)",
    labelNames: ["version"],
    registers,
  }).set({ version }, 1);

  // One read per scrape, shared by every gauge's collect() (prom-client runs them concurrently).
  let read: { at: number; rows: Promise<MerchantBacklog[] | undefined> } | undefined;
  const backlog = () => {
    if (!read || Date.now() - read.at > 1000) {
      read = {
        at: Date.now(),
        rows: readBacklog(sql).catch((error: unknown) => {
          onError(error);
          return undefined;
        }),
      };
    }
    return read.rows;
  };

  for (const [suffix, help, figure, how] of FIGURES) {
    new Gauge({
      name: `loops_sync_${suffix}`,
      help,
      registers,
      async collect() {
        this.reset();
        const rows = await backlog();
        const values = (rows ?? []).map(figure).filter((v): v is number => v !== null);
        const total = rows && combine(values, how);
        if (total !== undefined) this.set(total);
      },
    });
    new Gauge({
      name: `loops_sync_merchant_${suffix}`,
      help: `${help}, per merchant (only while there are at most METRICS_MERCHANT_LABELS_MAX merchants)`,
      labelNames: ["merchant"],
      registers,
      async collect() {
        this.reset();
        const rows = await backlog();
        if (!rows || rows.length > merchantLabelsMax) return;
        for (const row of rows) {
          const value = figure(row);
          if (value !== null) this.set({ merchant: row.merchantId }, value);
        }
      },
    });
  }
  registerDeliveryGauges(registry, backlog, merchantLabelsMax);
  registerPauseGauge(registry, sql, onError);
  registerSetAsideGauge(registry, sql, onError);
  registerLockedTooLongGauge(registry, sql, onError);
  registerScheduleMetrics(registry, sql, onError);
  registerConsumerMetrics(registry, sql, onError);
  return registry;
}

/** Scopes paused because Loops refused their calls (sync.upstream_pauses), by scope kind and cause. */
function registerPauseGauge(registry: Registry, sql: Sql, onError: (error: unknown) => void): void {
  new Gauge({
    name: "loops_sync_upstream_paused",
    help:
      "Scopes whose calls to Loops are paused because Loops refused them (scope application: every call; " +
      "merchant: one merchant's), by cause; they resume by themselves once a probe is answered",
    labelNames: ["scope", "cause"],
    registers: [registry],
    async collect() {
      this.reset();
      try {
        const rows = await sql<{ scope: string; cause: string; n: number }[]>`
          select case when scope = 'application' then 'application' else 'merchant' end as scope, cause,
                 count(*)::int as n
          from sync.upstream_pauses group by 1, 2`;
        for (const r of rows) this.set({ scope: r.scope, cause: r.cause }, r.n);
      } catch (error) {
        onError(error);
      }
    },
  });
}

/** Extra resources set aside because Loops refused their scope (sync.resource_refusals), by scope and resource. */
function registerSetAsideGauge(registry: Registry, sql: Sql, onError: (error: unknown) => void): void {
  new Gauge({
    name: "loops_sync_upstream_set_aside",
    help:
      "Extra resources (brands, menus, jobs, merchant, business_profile, channels) not read because Loops " +
      "refused their scope, by scope (application: every merchant; merchant: one merchant's) and resource; " +
      "orders go on. Grant the scope, then loops-sync refresh",
    labelNames: ["scope", "resource"],
    registers: [registry],
    async collect() {
      this.reset();
      try {
        const rows = await sql<{ scope: string; resource: string; n: number }[]>`
          select scope, resource, count(*)::int as n from sync.resource_refusals group by 1, 2`;
        for (const r of rows) this.set({ scope: r.scope, resource: r.resource }, r.n);
      } catch (error) {
        onError(error);
      }
    },
  });
}

/** Jobs locked longer than their task can run (JOB_RUN_LIMIT_SECONDS in @loops-sync/status), by task. */
function registerLockedTooLongGauge(registry: Registry, sql: Sql, onError: (error: unknown) => void): void {
  new Gauge({
    name: "loops_sync_jobs_locked_too_long",
    help:
      "graphile-worker jobs locked longer than their task can run, by task: held by a pool that does not run " +
      "them (normally 0; the worker releases a job whose claim lost its answer within seconds)",
    labelNames: ["task"],
    registers: [registry],
    async collect() {
      this.reset();
      try {
        const { jobs } = await readLockedTooLong(sql, 1000);
        for (const job of jobs) this.inc({ task: job.task });
      } catch (error) {
        onError(error);
      }
    },
  });
}

/** Events first stored in the last hour by how they arrived: catch-up only means webhooks stopped coming. */
function registerDeliveryGauges(
  registry: Registry,
  backlog: () => Promise<MerchantBacklog[] | undefined>,
  merchantLabelsMax: number,
): void {
  const help = "Events first stored in the last hour, by how they arrived (webhook or catchup)";
  new Gauge({
    name: "loops_sync_events_first_arrived_last_hour",
    help,
    labelNames: ["source"],
    registers: [registry],
    async collect() {
      this.reset();
      const rows = await backlog();
      if (!rows) return;
      for (const source of ["webhook", "catchup"] as const) {
        this.set(
          { source },
          rows.reduce((n, r) => n + r.lastHour[source], 0),
        );
      }
    },
  });
  new Gauge({
    name: "loops_sync_merchant_events_first_arrived_last_hour",
    help: `${help}, per merchant (only while there are at most METRICS_MERCHANT_LABELS_MAX merchants)`,
    labelNames: ["merchant", "source"],
    registers: [registry],
    async collect() {
      this.reset();
      const rows = await backlog();
      if (!rows || rows.length > merchantLabelsMax) return;
      for (const r of rows) {
        for (const source of ["webhook", "catchup"] as const) {
          this.set({ merchant: r.merchantId, source }, r.lastHour[source]);
        }
      }
    },
  });
}
