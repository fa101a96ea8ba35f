import type { Sql, TransactionSql } from "@loops-sync/db";
import { redactSecrets } from "./redactSecrets.ts";
import type { MerchantSyncStatus } from "./syncStatus.ts";

interface HealthRow {
  merchant_id: string;
  merchant_status: string;
  revoked_at: Date | null;
  paused_until: Date | null;
  cursor_event_id: string | null;
  cursor_created_at: Date | null;
  last_catchup_started_at: Date | null;
  last_catchup_finished_at: Date | null;
  last_catchup_status: string | null;
  last_catchup_error: string | null;
  last_webhook_received_at: Date | null;
  last_applied_event_created_at: Date | null;
  last_applied_at: Date | null;
  applied_lag_seconds: string | null;
  oldest_pending_age_seconds: string | null;
  pending_events: number;
  failed_events: number;
}

export const iso = (d: Date | null): string | null => (d === null ? null : d.toISOString());
// extract(epoch ...) is numeric, which the driver hands over as a string; a tenth of a second is plenty.
const seconds = (s: string | null): number | null => (s === null ? null : Math.round(Number(s) * 10) / 10);

/** One entry per known merchant, from the reporting.sync_health view, sorted by id. */
export async function readMerchantStatuses(sql: Sql | TransactionSql): Promise<MerchantSyncStatus[]> {
  const rows = await sql<HealthRow[]>`
    select h.*, c.last_run_error as last_catchup_error
    from reporting.sync_health h
    left join sync.cursors c on c.merchant_id = h.merchant_id
    order by h.merchant_id`;
  // Most tasks carry merchantId in their payload (see TaskPayloads); only the private table holds payloads.
  const jobs = await sql<{ merchant_id: string; queued: number; failed: number }[]>`
    select payload ->> 'merchantId' as merchant_id,
           count(*) filter (where attempts < max_attempts)::int as queued,
           count(*) filter (where attempts >= max_attempts)::int as failed
    from graphile_worker._private_jobs
    where payload ->> 'merchantId' is not null
    group by 1`;
  const jobsOf = new Map(jobs.map((j) => [j.merchant_id, j]));
  return rows.map((r) => ({
    merchantId: r.merchant_id,
    status: r.merchant_status,
    revoked: r.merchant_status === "revoked",
    revokedAt: iso(r.revoked_at),
    pausedUntil: iso(r.paused_until),
    cursor: { afterEventId: r.cursor_event_id, afterCreatedAt: iso(r.cursor_created_at) },
    lastCatchup: {
      startedAt: iso(r.last_catchup_started_at),
      finishedAt: iso(r.last_catchup_finished_at),
      status: r.last_catchup_status,
      error: redactSecrets(r.last_catchup_error),
    },
    lastWebhookAt: iso(r.last_webhook_received_at),
    lag: {
      appliedLagSeconds: seconds(r.applied_lag_seconds),
      lastAppliedEventCreatedAt: iso(r.last_applied_event_created_at),
      lastAppliedAt: iso(r.last_applied_at),
      oldestPendingAgeSeconds: seconds(r.oldest_pending_age_seconds),
    },
    pendingEvents: r.pending_events,
    failedEvents: r.failed_events,
    queuedJobs: jobsOf.get(r.merchant_id)?.queued ?? 0,
    failedJobs: jobsOf.get(r.merchant_id)?.failed ?? 0,
  }));
}
