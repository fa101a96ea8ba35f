import type { Sql } from "@loops-sync/db";
import { Counter, Gauge, Histogram, type Registry } from "prom-client";

export interface ForwardMetrics {
  /** Changes acknowledged by the endpoint with a 2xx. */
  delivered: Counter;
  /** Attempts that got no 2xx in time, by kind: status (an answer other than 2xx), timeout, network. */
  failedAttempts: Counter<"kind">;
  /** Changes declared dead (FORWARD_MAX_AGE_HOURS passed without a 2xx). */
  dead: Counter;
  /** Seconds from a change's commit (changed_at) to its 2xx. */
  lag: Histogram;
}

const NAMES = {
  delivered: "loops_sync_forward_delivered_total",
  failedAttempts: "loops_sync_forward_failed_attempts_total",
  dead: "loops_sync_forward_dead_total",
  lag: "loops_sync_forward_lag_seconds",
  oldest: "loops_sync_forward_oldest_undelivered_seconds",
  undelivered: "loops_sync_forward_undelivered_changes",
  deadNow: "loops_sync_forward_dead_changes",
} as const;

interface Backlog {
  oldest_seconds: number | null;
  undelivered: number;
  dead: number;
}

/**
 * Forwarding's series on `registry` (shared when a second forwarder in one process registers them again). The
 * gauges are read from Postgres at scrape time, so every worker shows the same figures (aggregate with max):
 * the age of the oldest change not yet delivered and not dead (a change the scan has not reached yet counts),
 * how many changes wait, and how many are dead now.
 */
export function createForwardMetrics(registry: Registry, sql: Sql): ForwardMetrics {
  const existing = registry.getSingleMetric(NAMES.delivered);
  if (existing) {
    return {
      delivered: existing as Counter,
      failedAttempts: registry.getSingleMetric(NAMES.failedAttempts) as Counter<"kind">,
      dead: registry.getSingleMetric(NAMES.dead) as Counter,
      lag: registry.getSingleMetric(NAMES.lag) as Histogram,
    };
  }
  const registers = [registry];
  let read: { at: number; rows: Promise<Backlog | undefined> } | undefined;
  const backlog = () => {
    if (!read || Date.now() - read.at > 1000) {
      read = { at: Date.now(), rows: readForwardBacklog(sql).catch(() => undefined) };
    }
    return read.rows;
  };
  const gauge = (name: string, help: string, pick: (b: Backlog) => number | null) =>
    new Gauge({
      name,
      help,
      registers,
      async collect() {
        const b = await backlog();
        const value = b ? pick(b) : null;
        if (value === null) this.reset();
        else this.set(value);
      },
    });
  gauge(NAMES.oldest, "Age of the oldest change not yet delivered to FORWARD_URL (dead ones aside)", (b) =>
    b.undelivered === 0 ? 0 : b.oldest_seconds,
  );
  gauge(
    NAMES.undelivered,
    "Changes not yet delivered to FORWARD_URL (dead ones aside)",
    (b) => b.undelivered,
  );
  gauge(NAMES.deadNow, "Changes dead now (not delivered within FORWARD_MAX_AGE_HOURS)", (b) => b.dead);
  return {
    delivered: new Counter({
      name: NAMES.delivered,
      help: "Changes delivered to FORWARD_URL (2xx)",
      registers,
    }),
    failedAttempts: new Counter({
      name: NAMES.failedAttempts,
      help: "Forwarding attempts without a 2xx in time, by kind (status, timeout, network)",
      labelNames: ["kind"],
      registers,
    }),
    dead: new Counter({ name: NAMES.dead, help: "Changes declared dead by this process", registers }),
    lag: new Histogram({
      name: NAMES.lag,
      help: "Time from a change's commit to its 2xx from FORWARD_URL",
      buckets: [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300],
      registers,
    }),
  };
}

async function readForwardBacklog(sql: Sql): Promise<Backlog | undefined> {
  const [row] = await sql<Backlog[]>`
    with p as (select scanned_through from sync.forward_progress),
    unscanned as (
      select c.changed_at from replica.changes c, p where c.position > p.scanned_through
      order by c.position limit 1
    )
    select
      extract(epoch from now() - least(
        (select min(changed_at) from sync.forward_deliveries where dead_at is null),
        (select changed_at from unscanned)))::float8 as oldest_seconds,
      (select count(*) from sync.forward_deliveries where dead_at is null)::int
        + (select count(*) from replica.changes c, p where c.position > p.scanned_through)::int as undelivered,
      (select count(*) from sync.forward_deliveries where dead_at is not null)::int as dead
    where exists (select 1 from p)`;
  return row;
}
