import type { Sql } from "@loops-sync/db";
import { type ConsumerStatus, readConsumers } from "@loops-sync/status";
import { Gauge, type Registry } from "prom-client";

const FIGURES: Array<[string, string, (c: ConsumerStatus) => number]> = [
  [
    "consumer_lag_changes",
    "Changes matching a feed consumer's filter that it has not acknowledged (leased or waiting)",
    (c) => c.lagChanges,
  ],
  [
    "consumer_lag_seconds",
    "Age of a feed consumer's oldest unacknowledged change; 0 when it has none",
    (c) => c.lagSeconds,
  ],
  ["consumer_leased_changes", "Changes leased to a feed consumer's instances right now", (c) => c.leased],
];

/**
 * Gauges per feed consumer (label `consumer`: a handful, created by operators), read from Postgres at scrape
 * time (`sync.consumer_lag()`), at most once a second: every process shows the same figures.
 */
export function registerConsumerMetrics(
  registry: Registry,
  sql: Sql,
  onError: (error: unknown) => void,
): void {
  let read: { at: number; rows: Promise<ConsumerStatus[]> } | undefined;
  const consumers = () => {
    if (!read || Date.now() - read.at > 1000) {
      read = {
        at: Date.now(),
        rows: readConsumers(sql).catch((error: unknown) => {
          onError(error);
          return [];
        }),
      };
    }
    return read.rows;
  };
  for (const [suffix, help, figure] of FIGURES) {
    new Gauge({
      name: `loops_sync_${suffix}`,
      help,
      labelNames: ["consumer"],
      registers: [registry],
      async collect() {
        this.reset();
        for (const c of await consumers()) this.set({ consumer: c.name }, figure(c));
      },
    });
  }
}
