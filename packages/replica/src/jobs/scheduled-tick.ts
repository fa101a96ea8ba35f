import type { Sql } from "@loops-sync/db";
import { parseCrontab } from "graphile-worker";

/** A run of a scheduled task over many merchants, recorded in `sync.scheduled_ticks`. */
export interface ScheduledTick {
  /** The next tick of the cron: the run should be done by then. Null when the cron fires within 8 days never. */
  readonly deadline: Date | null;
  /** One more item done (progress shows on the status page). */
  itemDone(): void;
  /** Records the end; says whether the run overran its deadline. */
  finish(): Promise<{ durationSeconds: number; overran: boolean }>;
}

export interface StartTickOptions {
  /** The task's name, e.g. `catchup` (one row per task). */
  task: string;
  /** Its five-field cron schedule (UTC, as graphile-worker reads it). */
  cron: string;
  /** How many items (merchants) this run covers. */
  items: number;
  /** Default: now. */
  now?: Date;
}

const PROGRESS_EVERY = 100;

/** The first minute after `after` that `cron` fires on (UTC), looking at most 8 days ahead. */
export function nextCronTick(cron: string, after: Date): Date | null {
  const item = parseCrontab(`${cron.trim()} tick`)[0];
  if (!item) return null;
  const t = new Date(after);
  t.setUTCSeconds(0, 0);
  for (let i = 0; i < 8 * 24 * 60; i++) {
    t.setUTCMinutes(t.getUTCMinutes() + 1);
    const digest = {
      min: t.getUTCMinutes(),
      hour: t.getUTCHours(),
      date: t.getUTCDate(),
      month: t.getUTCMonth() + 1,
      dow: t.getUTCDay(),
    };
    if (item.match(digest)) return t;
  }
  return null;
}

/**
 * Starts recording a run. Reusable by any cron task that walks every merchant (catch-up, reconcile): the
 * row per task keeps the last run, and `overruns` counts the runs that ended after the next tick was due.
 */
export async function startScheduledTick(
  sql: Sql,
  { task, cron, items, now = new Date() }: StartTickOptions,
): Promise<ScheduledTick> {
  const deadline = nextCronTick(cron, now);
  await sql`
    insert into sync.scheduled_ticks (task, started_at, deadline, items)
    values (${task}, ${now}, ${deadline}, ${items})
    on conflict (task) do update
      set started_at = excluded.started_at, deadline = excluded.deadline, finished_at = null,
          items = excluded.items, items_done = 0`;
  let done = 0;
  let saving = Promise.resolve();
  const save = () => {
    const n = done;
    saving = saving
      .then(() => sql`update sync.scheduled_ticks set items_done = ${n} where task = ${task}`.then(() => {}))
      .catch(() => {});
  };
  return {
    deadline,
    itemDone() {
      done++;
      if (done % PROGRESS_EVERY === 0) save();
    },
    async finish() {
      await saving;
      const [row] = await sql<{ duration: number; overran: boolean }[]>`
        update sync.scheduled_ticks
           set finished_at = clock_timestamp(), items_done = ${done},
               last_duration_seconds = extract(epoch from clock_timestamp() - started_at),
               last_overran = coalesce(clock_timestamp() > deadline, false),
               overruns = overruns + (coalesce(clock_timestamp() > deadline, false))::int
         where task = ${task}
        returning last_duration_seconds as duration, last_overran as overran`;
      return { durationSeconds: row?.duration ?? 0, overran: row?.overran ?? false };
    },
  };
}

/**
 * One item of a run whose items are separate jobs (the reconcile's one job per merchant, perhaps on several
 * workers) is done: counted in the task's row, and the run recorded as finished with the last of them.
 */
export async function tickItemDone(sql: Sql, task: string): Promise<void> {
  await sql`
    update sync.scheduled_ticks
       set items_done = items_done + 1,
           finished_at = case when items_done + 1 >= items then clock_timestamp() end,
           last_duration_seconds = case when items_done + 1 >= items
             then extract(epoch from clock_timestamp() - started_at) else last_duration_seconds end,
           last_overran = case when items_done + 1 >= items
             then coalesce(clock_timestamp() > deadline, false) else last_overran end,
           overruns = overruns + (items_done + 1 >= items and coalesce(clock_timestamp() > deadline, false))::int
     where task = ${task} and finished_at is null`;
}

/** A new run starts while the last one is still going: that one counts as an overrun. */
export async function countUnfinishedRunOverrun(sql: Sql, task: string): Promise<void> {
  await sql`
    update sync.scheduled_ticks set overruns = overruns + 1, last_overran = true
    where task = ${task} and finished_at is null`;
}
