import type { Sql, TransactionSql } from "@loops-sync/db";
import { kyselyOver } from "@loops-sync/schema";
import { sql as raw } from "kysely";
import { redactSecrets } from "./redact-secrets.ts";
import type { StatusDatabase } from "./status-database.ts";
import type { MerchantSyncStatus } from "./sync-status.ts";

export const iso = (d: Date | null): string | null => (d === null ? null : d.toISOString());
// extract(epoch ...) is numeric, which the driver hands over as a string; a tenth of a second is plenty.
const seconds = (s: string | null): number | null => (s === null ? null : Math.round(Number(s) * 10) / 10);

/** One entry per known merchant, from the reporting.sync_health view, sorted by id. */
export async function readMerchantStatuses(sql: Sql | TransactionSql): Promise<MerchantSyncStatus[]> {
  const db = kyselyOver<StatusDatabase>(sql);
  const rows = await db
    .selectFrom("reporting.sync_health as h")
    .leftJoin("sync.cursors as c", "c.merchant_id", "h.merchant_id")
    .selectAll("h")
    .select("c.last_run_error as last_catchup_error")
    // The view has a row per sync.merchants row, whose id and status are never null.
    .$narrowType<{
      merchant_id: string;
      merchant_status: string;
      pending_events: number;
      failed_events: number;
    }>()
    .orderBy("h.merchant_id")
    .execute();
  // Most tasks carry merchantId in their payload (see TaskPayloads); only the private table holds payloads.
  const merchantOf = raw<string>`payload ->> 'merchantId'`;
  const jobs = await db
    .selectFrom("graphile_worker._private_jobs")
    .select([
      merchantOf.as("merchant_id"),
      raw<number>`count(*) filter (where attempts < max_attempts)::int`.as("queued"),
      raw<number>`count(*) filter (where attempts >= max_attempts)::int`.as("failed"),
    ])
    .where(merchantOf, "is not", null)
    .groupBy(merchantOf)
    .execute();
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
