import type { SyncStatus } from "./sync-status.ts";

/** Something an operator should look at; `loops-sync status` exits 1 while any is present. */
export interface AttentionItem {
  kind: "failed_events" | "failed_jobs" | "revoked_merchant" | "lag" | "forward_dead" | "forward_lag";
  /** The merchant concerned; absent for queue-wide items. */
  merchantId?: string;
  detail: string;
}

/**
 * What in a snapshot needs an operator: failed events, failed jobs, a revoked merchant, or work waiting
 * longer than `maxLagSeconds` (the oldest pending event of a merchant, or the oldest queued order refresh).
 * Waiting work is the lag measure, not the age of the newest applied event: a quiet merchant is not late.
 */
export function needsAttention(status: SyncStatus, maxLagSeconds: number): AttentionItem[] {
  const items: AttentionItem[] = [];
  for (const m of status.merchants) {
    if (m.revoked) {
      items.push({
        kind: "revoked_merchant",
        merchantId: m.merchantId,
        detail: `${m.merchantId} revoked the connection${m.revokedAt ? ` at ${m.revokedAt}` : ""}`,
      });
    }
    if (m.failedEvents > 0) {
      items.push({
        kind: "failed_events",
        merchantId: m.merchantId,
        detail: `${m.merchantId} has ${m.failedEvents} failed event(s); fix the cause, then \`loops-sync replay EVENT_ID\``,
      });
    }
    const waited = m.lag.oldestPendingAgeSeconds;
    if (waited !== null && waited > maxLagSeconds) {
      items.push({
        kind: "lag",
        merchantId: m.merchantId,
        detail: `${m.merchantId}'s oldest pending event has waited ${Math.round(waited)} s (more than ${maxLagSeconds} s)`,
      });
    }
  }
  if (status.queue.failed > 0) {
    items.push({
      kind: "failed_jobs",
      detail: `${status.queue.failed} job(s) used all their attempts (see the queue's failed jobs)`,
    });
  }
  const oldest = status.queue.oldestOrderToRefreshSeconds;
  if (oldest !== null && oldest > maxLagSeconds) {
    items.push({
      kind: "lag",
      detail: `the oldest queued order refresh has waited ${Math.round(oldest)} s (more than ${maxLagSeconds} s)`,
    });
  }
  const forwarding = status.forwarding;
  if (forwarding && forwarding.dead > 0) {
    items.push({
      kind: "forward_dead",
      detail: `${forwarding.dead} forwarded change(s) are dead (no 2xx from ${forwarding.endpoint ?? "FORWARD_URL"} within FORWARD_MAX_AGE_HOURS); fix the endpoint, then \`loops-sync forward retry --dead\``,
    });
  }
  const behind = forwarding?.oldestUndeliveredSeconds ?? null;
  if (behind !== null && behind > maxLagSeconds) {
    items.push({
      kind: "forward_lag",
      detail: `the oldest change not yet forwarded is ${Math.round(behind)} s old (more than ${maxLagSeconds} s)${forwarding?.lastFailure ? `; last failure: ${forwarding.lastFailure}` : ""}`,
    });
  }
  return items;
}
