import type { SyncStatus } from "./sync-status.ts";

/** Something an operator should look at; `loops-sync status` exits 1 while any is present. */
export interface AttentionItem {
  kind:
    | "failed_events"
    | "failed_jobs"
    | "revoked_merchant"
    | "lag"
    | "forward_dead"
    | "forward_lag"
    | "forward_off"
    | "consumer_lag"
    | "paused"
    | "set_aside"
    | "locked_too_long";
  /** The merchant concerned; absent for queue-wide items. */
  merchantId?: string;
  detail: string;
}

/** A feed consumer whose oldest unacknowledged change is older than this needs attention (the alert's 10 minutes). */
export const CONSUMER_LAG_ATTENTION_SECONDS = 600;

/** What each pause cause asks of the operator, if the refusal does not go away by itself. */
const PAUSE_FIX: Record<string, string> = {
  unauthorized: "check LOOPS_CLIENT_ID / LOOPS_CLIENT_SECRET",
  insufficient_scope: "ask Loops to approve the application's scopes",
  application_suspended: "the application is suspended upstream; contact Loops",
  scope_not_granted: "ask the merchant to grant the application's scopes",
};

/**
 * What in a snapshot needs an operator: calls paused by a refusal of Loops, failed events, failed jobs, a revoked merchant, or work waiting
 * longer than `maxLagSeconds` (the oldest pending event of a merchant, or the oldest queued order refresh).
 * Waiting work is the lag measure, not the age of the newest applied event: a quiet merchant is not late.
 */
export function needsAttention(status: SyncStatus, maxLagSeconds: number): AttentionItem[] {
  const items: AttentionItem[] = [];
  for (const p of status.recovery.pauses) {
    const merchant = p.scope === "application" ? undefined : p.merchantId;
    items.push({
      kind: "paused",
      ...(merchant ? { merchantId: merchant } : {}),
      detail:
        `${merchant ? `calls for ${merchant}` : "every call to Loops"} paused since ${p.pausedAt}: ` +
        `Loops refused them (${p.cause}); next probe at ${p.nextProbeAt}, calls resume by themselves ` +
        `(${PAUSE_FIX[p.cause] ?? "check the refusal"})`,
    });
  }
  for (const r of status.recovery.setAside) {
    items.push({
      kind: "set_aside",
      ...(r.merchantId ? { merchantId: r.merchantId } : {}),
      detail:
        `${r.resource} ${r.merchantId ? `of ${r.merchantId}` : "of every merchant"} set aside since ${r.refusedAt}: ` +
        `Loops refused the scope (${r.code}); orders go on, next try at ${r.retryAt} ` +
        `(${PAUSE_FIX[r.code] ?? "check the refusal"}, then \`loops-sync refresh\`)`,
    });
  }
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
        detail: `${m.merchantId} has ${m.failedEvents} failed event(s); fix the cause, then \`loops-sync replay --failed --merchant ${m.merchantId}\``,
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
  const stuck = status.queue.lockedTooLongJobs[0];
  if (stuck) {
    const where = stuck.host ? ` on ${stuck.host} pid ${stuck.pid}` : "";
    items.push({
      kind: "locked_too_long",
      detail:
        `${status.queue.lockedTooLong} job(s) locked longer than their task can run, the longest ${stuck.task} ` +
        `job ${stuck.id} for ${stuck.lockedSeconds} s (limit ${stuck.limitSeconds} s) by ${stuck.lockedBy}${where}: ` +
        "no worker runs it; restart that worker process and its jobs are released",
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
  if (forwarding?.state === "off" && forwarding.undelivered > 0) {
    items.push({
      kind: "forward_off",
      detail: `forwarding is off (no running worker has FORWARD_URL${forwarding.forwarderSeenAt ? `; last seen ${forwarding.forwarderSeenAt}` : ""}) and ${forwarding.undelivered} change(s) wait for ${forwarding.endpoint ?? "FORWARD_URL"}, kept for RETENTION_DAYS and then pruned like the rest of the feed; start a worker with FORWARD_URL to send them`,
    });
  }
  const behind = forwarding?.oldestUndeliveredSeconds ?? null;
  // Off explains the wait already (forward_off); lag is for forwarding that runs.
  if (behind !== null && behind > maxLagSeconds && forwarding?.state !== "off") {
    items.push({
      kind: "forward_lag",
      detail: `the oldest change not yet forwarded is ${Math.round(behind)} s old (more than ${maxLagSeconds} s)${forwarding?.lastFailure ? `; last failure: ${forwarding.lastFailure}` : ""}`,
    });
  }
  for (const c of status.consumers) {
    if (c.lagSeconds > CONSUMER_LAG_ATTENTION_SECONDS) {
      items.push({
        kind: "consumer_lag",
        detail: `feed consumer ${c.name} has ${c.lagChanges} unacknowledged change(s), the oldest ${Math.round(c.lagSeconds)} s old (more than ${CONSUMER_LAG_ATTENTION_SECONDS} s); are its instances running and acknowledging?`,
      });
    }
  }
  return items;
}
