import type { Sql } from "@loops-sync/db";

export interface TrickleState {
  /** The task's row in sync.scheduled_ticks, e.g. `reconcile`. */
  task: string;
  /** The configured interval (RECONCILE_CRON's, CATCHUP_CRON's), seconds. */
  intervalSeconds: number;
  /** The interval the trickle keeps at its share of the budget, seconds. */
  effectiveIntervalSeconds: number;
  /** Active merchants. */
  items: number;
  /** Merchants reconciled within the effective interval. */
  itemsDone: number;
  /** Stretched past twice the configured interval. */
  overran: boolean;
}

/**
 * Records a trickle's state in its row of sync.scheduled_ticks (status, /status and /metrics read it): a trickle
 * never "runs", so the row stays finished; `started_at` marks the start of its current round, and a new round
 * begins once the effective interval has passed since. Answers whether this call began a new round. `overruns`
 * counts the times the trickle became stretched past twice its interval. A run over every merchant going on in
 * the same row (startScheduledTick: a start's catch-up) is left alone; the trickle's next step after it ends
 * writes the row again.
 */
export async function recordTrickle(sql: Sql, state: TrickleState): Promise<{ newRound: boolean }> {
  const [row] = await sql<{ new_round: boolean }[]>`
    insert into sync.scheduled_ticks as t (task, started_at, finished_at, items, items_done, last_overran,
                                           interval_seconds, effective_interval_seconds)
    values (${state.task}, now(), now(), ${state.items}, ${state.itemsDone},
            ${state.overran}, ${state.intervalSeconds}, ${state.effectiveIntervalSeconds})
    on conflict (task) do update
      set started_at = case
            when t.started_at <= now() - make_interval(secs => excluded.effective_interval_seconds)
              or t.interval_seconds is null
            then now() else t.started_at end,
          finished_at = now(), items = excluded.items,
          items_done = excluded.items_done, interval_seconds = excluded.interval_seconds,
          effective_interval_seconds = excluded.effective_interval_seconds,
          overruns = t.overruns + (excluded.last_overran and not t.last_overran)::int,
          last_overran = excluded.last_overran
      -- A run over every merchant in progress on the same row (a start's catch-up) keeps it until it ends.
      where t.finished_at is not null
    returning t.started_at = now() as new_round`;
  return { newRound: row?.new_round ?? false };
}
