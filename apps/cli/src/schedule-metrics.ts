import type { Sql } from "@loops-sync/db";
import {
  type RequestBudgetStatus,
  readRequestBudgetStatus,
  readScheduledTicks,
  type ScheduledTickStatus,
} from "@loops-sync/status";
import { Gauge, type Registry } from "prom-client";

type TickFigure = (t: ScheduledTickStatus) => number | null;

const TICK_FIGURES: Array<[string, string, TickFigure]> = [
  [
    "scheduled_run_overran",
    "1 while a scheduled run over every merchant is past its next tick, or the last one ended after it",
    (t) => (t.overran ? 1 : 0),
  ],
  [
    "scheduled_run_overruns",
    "Scheduled runs that ended after their next tick was due, ever",
    (t) => t.overruns,
  ],
  [
    "scheduled_run_duration_seconds",
    "How long the last finished scheduled run took",
    (t) => t.lastDurationSeconds,
  ],
  [
    "scheduled_run_progress_ratio",
    "Share of the merchants the current (or last) scheduled run has done",
    (t) => (t.items === 0 ? 1 : t.itemsDone / t.items),
  ],
];

/**
 * Gauges of the scheduled runs (label `task`: a handful, whatever the merchant count) and of the shared
 * request budget, read from Postgres at scrape time: every process shows the same figures.
 */
export function registerScheduleMetrics(
  registry: Registry,
  sql: Sql,
  onError: (error: unknown) => void,
): void {
  let read: {
    at: number;
    rows: Promise<{ ticks: ScheduledTickStatus[]; budget: RequestBudgetStatus } | undefined>;
  };
  const state = () => {
    if (!read || Date.now() - read.at > 1000) {
      read = {
        at: Date.now(),
        rows: Promise.all([readScheduledTicks(sql), readRequestBudgetStatus(sql)])
          .then(([ticks, budget]) => ({ ticks, budget }))
          .catch((error: unknown) => {
            onError(error);
            return undefined;
          }),
      };
    }
    return read.rows;
  };
  for (const [suffix, help, figure] of TICK_FIGURES) {
    new Gauge({
      name: `loops_sync_${suffix}`,
      help,
      labelNames: ["task"],
      registers: [registry],
      async collect() {
        this.reset();
        for (const tick of (await state())?.ticks ?? []) {
          const value = figure(tick);
          if (value !== null) this.set({ task: tick.task }, value);
        }
      },
    });
  }
  new Gauge({
    name: "loops_sync_scheduled_interval_seconds",
    help:
      "A trickle's interval (task reconcile, catchup): kind=configured is RECONCILE_CRON's or CATCHUP_CRON's, " +
      "kind=effective what the merchants need at RECONCILE_BUDGET_SHARE, both trickles together (longer when they do not fit)",
    labelNames: ["task", "kind"],
    registers: [registry],
    async collect() {
      this.reset();
      for (const tick of (await state())?.ticks ?? []) {
        if (tick.intervalSeconds === null || tick.effectiveIntervalSeconds === null) continue;
        this.set({ task: tick.task, kind: "configured" }, tick.intervalSeconds);
        this.set({ task: tick.task, kind: "effective" }, tick.effectiveIntervalSeconds);
      }
    },
  });
  new Gauge({
    name: "loops_sync_loops_requests_granted_last_second",
    help: "Requests to Loops the shared budget (LOOPS_MAX_RPS) granted in the last 1.2 s, every process together",
    registers: [registry],
    async collect() {
      this.reset();
      const budget = (await state())?.budget;
      if (budget) this.set(budget.grantedLastSecond);
    },
  });
  new Gauge({
    name: "loops_sync_loops_request_budget_narrowed_rps",
    help: "The rate a 429 narrowed the shared budget to until its Retry-After; 0 when none is in force",
    registers: [registry],
    async collect() {
      this.reset();
      const budget = (await state())?.budget;
      if (budget) this.set(budget.narrowedRps ?? 0);
    },
  });
}
