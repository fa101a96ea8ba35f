import { readRequestBudgetState, type Sql, type TransactionSql } from "@loops-sync/db";
import { iso } from "./read-merchant-statuses.ts";
import type { RequestBudgetStatus, ScheduledTickStatus } from "./sync-status.ts";

/** The last run of each scheduled tick over every merchant (sync.scheduled_ticks), by task. */
export async function readScheduledTicks(sql: Sql | TransactionSql): Promise<ScheduledTickStatus[]> {
  const rows = await sql<
    {
      task: string;
      started_at: Date;
      deadline: Date | null;
      finished_at: Date | null;
      items: number;
      items_done: number;
      last_duration_seconds: number | null;
      last_overran: boolean;
      overruns: number;
      overdue: boolean;
      interval_seconds: number | null;
      effective_interval_seconds: number | null;
    }[]
  >`
    select task, started_at, deadline, finished_at, items, items_done, last_duration_seconds, last_overran,
           overruns, interval_seconds, effective_interval_seconds,
           (finished_at is null and deadline < now()) as overdue
    from sync.scheduled_ticks order by task`;
  return rows.map((r) => ({
    task: r.task,
    startedAt: iso(r.started_at)!,
    deadline: iso(r.deadline),
    finishedAt: iso(r.finished_at),
    running: r.finished_at === null,
    items: r.items,
    itemsDone: r.items_done,
    lastDurationSeconds:
      r.last_duration_seconds === null ? null : Math.round(r.last_duration_seconds * 10) / 10,
    // The run now going is past its deadline, or the last one ended after it.
    overran: r.overdue || (r.finished_at !== null && r.last_overran),
    overruns: r.overruns,
    intervalSeconds: r.interval_seconds,
    effectiveIntervalSeconds:
      r.effective_interval_seconds === null ? null : Math.round(r.effective_interval_seconds),
  }));
}

/** The shared request budget (LOOPS_MAX_RPS) as every process sees it, read by the budget's own folder. */
export async function readRequestBudgetStatus(sql: Sql | TransactionSql): Promise<RequestBudgetStatus> {
  const { grantedLastSecond, narrowedRps, narrowedUntil } = await readRequestBudgetState(sql);
  return { grantedLastSecond, narrowedRps, narrowedUntil: iso(narrowedUntil) };
}
