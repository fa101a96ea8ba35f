import type { Sql, TransactionSql } from "@loops-sync/db";

/** A feed consumer (`replica.create_consumer`) as the operator sees it: where it is and how far behind. */
export interface ConsumerStatus {
  name: string;
  /** Its filter; null: every resource (every merchant). */
  resources: string[] | null;
  merchantIds: string[] | null;
  /** Every matching change at or below this position is acknowledged. */
  ackedThrough: number;
  /** Matching changes not yet acknowledged (leased or waiting): the lag in changes. */
  lagChanges: number;
  /** Seconds since the oldest unacknowledged matching change was written; 0 when there is none. */
  lagSeconds: number;
  /** The oldest unacknowledged change's changed_at, ISO 8601 UTC, or null. */
  oldestPendingAt: string | null;
  /** Changes leased to an instance right now. */
  leased: number;
  createdAt: string;
  /** The last receive_changes call, or null when none came yet. */
  lastReceiveAt: string | null;
}

interface Row {
  name: string;
  resources: string[] | null;
  merchant_ids: string[] | null;
  acked_through: string;
  pending: string;
  leased: string;
  oldest_pending_at: Date | null;
  lag_seconds: number;
  created_at: Date;
  last_receive_at: Date | null;
}

/** Every feed consumer with its lag (`sync.consumer_lag()`, migration 0022), by name. */
export async function readConsumers(sql: Sql | TransactionSql): Promise<ConsumerStatus[]> {
  const rows = await sql<Row[]>`
    select name, resources, merchant_ids, acked_through::text, pending::text, leased::text, oldest_pending_at,
           lag_seconds, created_at, last_receive_at
    from sync.consumer_lag()`;
  return rows.map((r) => ({
    name: r.name,
    resources: r.resources,
    merchantIds: r.merchant_ids,
    ackedThrough: Number(r.acked_through),
    lagChanges: Number(r.pending),
    lagSeconds: Math.max(0, Math.round(Number(r.lag_seconds) * 1000) / 1000),
    oldestPendingAt: r.oldest_pending_at?.toISOString() ?? null,
    leased: Number(r.leased),
    createdAt: r.created_at.toISOString(),
    lastReceiveAt: r.last_receive_at?.toISOString() ?? null,
  }));
}
