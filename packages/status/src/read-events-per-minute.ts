import type { Sql, TransactionSql } from "@loops-sync/db";
import { kyselyOver } from "@loops-sync/schema";
import { sql as raw } from "kysely";
import type { StatusDatabase } from "./status-database.ts";
import { EVENT_OUTCOMES, type EventMinute, type OutcomeCounts } from "./sync-status.ts";

const zeroCounts = (): OutcomeCounts =>
  Object.fromEntries(EVENT_OUTCOMES.map((o) => [o, 0])) as OutcomeCounts;

/**
 * Events received per minute by their current outcome over the last `minutes` minutes (the current,
 * partial minute included), oldest first, with empty minutes present so a chart has no gaps.
 */
export async function readEventsPerMinute(
  sql: Sql | TransactionSql,
  minutes = 60,
): Promise<{ eventsPerMinute: EventMinute[]; eventsLastHour: OutcomeCounts; now: Date }> {
  const db = kyselyOver<StatusDatabase>(sql);
  const { rows } = await raw<{ now: Date; first: Date }>`
    select now() as now, date_trunc('minute', now()) - make_interval(mins => ${minutes - 1}) as first`.execute(
    db,
  );
  const clock = rows[0]!;
  const minute = raw<Date>`date_trunc('minute', received_at)`;
  const counted = await db
    .selectFrom("sync.events")
    .select([minute.as("minute"), "outcome", (eb) => eb.fn.countAll<number>().as("count")])
    .where("received_at", ">=", clock.first)
    .groupBy([minute, "outcome"])
    .execute();
  const buckets: EventMinute[] = [];
  const index = new Map<number, EventMinute>();
  for (let i = 0; i < minutes; i++) {
    const start = new Date(clock.first.getTime() + i * 60_000);
    const bucket = { minute: start.toISOString(), counts: zeroCounts() };
    buckets.push(bucket);
    index.set(start.getTime(), bucket);
  }
  const total = zeroCounts();
  for (const r of counted) {
    const bucket = index.get(r.minute.getTime());
    // A row stamped in the future (clock skew between writers) has no bucket; it still counts in the hour.
    if (bucket) bucket.counts[r.outcome] = (bucket.counts[r.outcome] ?? 0) + r.count;
    total[r.outcome] = (total[r.outcome] ?? 0) + r.count;
  }
  return { eventsPerMinute: buckets, eventsLastHour: total, now: clock.now };
}
