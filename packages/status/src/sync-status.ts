import type { EventOutcome } from "@loops-sync/db";
import type { ChangeFeedStatus } from "./read-change-feed.ts";
import type { ConsumerStatus } from "./read-consumers.ts";
import type { ForwardingStatus } from "./read-forwarding.ts";
import type { GatewayWriteCount } from "./read-gateway-writes.ts";
import type { LockedTooLongJob } from "./read-locked-too-long.ts";

/**
 * The shape `readSyncStatus` returns, printed by `loops-sync status --json` and served at `/status/api`.
 * Plain JSON: times are ISO 8601 UTC strings (or null when it never happened), durations are seconds,
 * counts are numbers. Fields are only ever added, never renamed, so scripts can depend on them.
 */
export interface SyncStatus {
  /** The database's clock when the snapshot was read; every age below is measured from it. */
  generatedAt: string;
  merchants: MerchantSyncStatus[];
  queue: QueueStatus;
  /** The 60 minutes up to and including the current one, oldest first; every minute is present. */
  eventsPerMinute: EventMinute[];
  /** Events received in that hour, by outcome. */
  eventsLastHour: OutcomeCounts;
  /** The change feed: head position, oldest retained, pruned_through, size. */
  changeFeed: ChangeFeedStatus;
  /** Forwarding to FORWARD_URL; null when it was never turned on. */
  forwarding: ForwardingStatus | null;
  /** The feed consumers (`replica.create_consumer`) with their lag in changes and seconds, by name. */
  consumers: ConsumerStatus[];
  /** What the gateway's writes changed in the mirror in the last hour, by resource (docs/gateway.md). */
  gatewayWrites: GatewayWriteCount[];
  /** The last run of each scheduled tick over every merchant (`catchup`, …), by task. */
  scheduledTicks: ScheduledTickStatus[];
  /** The request budget to Loops all processes share (LOOPS_MAX_RPS). */
  requestBudget: RequestBudgetStatus;
  /** How many merchants there are in all (`merchants` may be one page of them, see the status page's API). */
  merchantsTotal: number;
  /** How many of them revoked the connection. */
  merchantsRevoked: number;
  /** Calls paused by a refusal of Loops, and events Postgres refused to store. */
  recovery: RecoveryStatus;
  /** Events stored as `unhandled`, by type (the 50 most frequent), over what retention keeps. */
  unhandledEvents: UnhandledEventType[];
}

export interface RecoveryStatus {
  /** Paused scopes, the application's first; empty while every call may be made. */
  pauses: UpstreamPauseStatus[];
  /** Events catch-up met that Postgres can never store (sync.refused_events): recorded, then skipped. */
  refusedEvents: { total: number; lastDay: number };
  /**
   * Extra resources (brands, menus, jobs, merchant, business_profile, channels) set aside because Loops
   * refused their scope (sync.resource_refusals), the application's first; orders and the rest go on.
   */
  setAside: SetAsideResourceStatus[];
}

export interface SetAsideResourceStatus {
  /** `application` (every merchant) or `merchant`. */
  scope: string;
  /** Null for the application. */
  merchantId: string | null;
  /** The resource family: `brands`, `menus`, `jobs`, `merchant`, `business_profile`, `channels`. */
  resource: string;
  /** `insufficient_scope` (the application is not approved) or `scope_not_granted` (the merchant did not grant). */
  code: string;
  /** Loops's wording, shortened, with anything secret-looking masked. */
  detail: string | null;
  refusedAt: string;
  /** No call for the resource before then; `loops-sync refresh` tries at once. */
  retryAt: string;
  /** Refusals in a row (the wait doubles with each, 1 h up to 24 h). */
  refusals: number;
}

export interface UpstreamPauseStatus {
  /** `application` (every call) or `merchant:<id>`. */
  scope: string;
  /** The refusal: `unauthorized`, `insufficient_scope`, `application_suspended` or `scope_not_granted`. */
  cause: string;
  /** Loops's wording, shortened, with anything secret-looking masked. */
  detail: string | null;
  /** The merchant the probe calls for. */
  merchantId: string;
  pausedAt: string;
  /** When the next probe (one cheap call) is due; calls resume by themselves once one is answered. */
  nextProbeAt: string;
  /** Probes refused so far. */
  probes: number;
}

export interface UnhandledEventType {
  type: string;
  count: number;
  lastReceivedAt: string;
}

export interface ScheduledTickStatus {
  task: string;
  startedAt: string;
  /** The next tick of its cron: the run should have ended by then (null: none within 8 days). */
  deadline: string | null;
  finishedAt: string | null;
  running: boolean;
  /** Merchants the run covers, and how many it has done. */
  items: number;
  itemsDone: number;
  lastDurationSeconds: number | null;
  /** The run going now is past its deadline, or the last one ended after it: the schedule cannot keep up. */
  overran: boolean;
  /** Runs that ended after their deadline, ever. */
  overruns: number;
  /**
   * A trickle (the reconcile, catch-up): the configured interval (RECONCILE_CRON's, CATCHUP_CRON's), seconds;
   * null for a run on a cron. Its `overran` means stretched past twice this.
   */
  intervalSeconds: number | null;
  /**
   * A trickle's interval at the background share, both trickles together (longer than configured when the
   * merchants do not fit).
   */
  effectiveIntervalSeconds: number | null;
}

export interface RequestBudgetStatus {
  /** Requests granted in the last 1.2 s, every process together. */
  grantedLastSecond: number;
  /** After a 429: the narrowed rate in force, and until when (null when none is). */
  narrowedRps: number | null;
  narrowedUntil: string | null;
}

/** Outcomes of sync.events (see docs/architecture.md). Counts for values added later appear too. */
export { EVENT_OUTCOMES, type EventOutcome } from "@loops-sync/db";
export type OutcomeCounts = Record<EventOutcome, number> & Record<string, number>;

export interface MerchantSyncStatus {
  merchantId: string;
  /** `active` or `revoked` (from sync.merchants). */
  status: string;
  revoked: boolean;
  revokedAt: string | null;
  /** No API call for this merchant before this time (a 429's Retry-After). */
  pausedUntil: string | null;
  /** Catch-up position in GET /events. */
  cursor: { afterEventId: string | null; afterCreatedAt: string | null };
  lastCatchup: {
    startedAt: string | null;
    finishedAt: string | null;
    status: string | null;
    /** Shortened, with anything secret-looking masked. */
    error: string | null;
  };
  /** Newest received_at of an event that came by webhook. */
  lastWebhookAt: string | null;
  lag: {
    /** now − created_at of the newest applied event: how far behind upstream the replica is. */
    appliedLagSeconds: number | null;
    lastAppliedEventCreatedAt: string | null;
    lastAppliedAt: string | null;
    /** now − received_at of the oldest event still pending. */
    oldestPendingAgeSeconds: number | null;
  };
  pendingEvents: number;
  failedEvents: number;
  /** graphile-worker jobs for this merchant (payload.merchantId) that will still run: waiting, scheduled or running. */
  queuedJobs: number;
  /** graphile-worker jobs for this merchant that used all their attempts. */
  failedJobs: number;
}

export interface QueueStatus {
  /** Jobs ready to run now. */
  waiting: number;
  /** Jobs due later: scheduled, or waiting out a retry backoff. */
  scheduled: number;
  /** Jobs a worker holds right now. */
  running: number;
  /** Jobs that used all their attempts and will not run again. */
  failed: number;
  byTask: { task: string; waiting: number; scheduled: number; running: number; failed: number }[];
  /** The 20 most recently failed jobs, newest first. */
  failedJobs: FailedJob[];
  /**
   * Orders queued for a fetch in sync.order_refresh (order events go there, not into jobs), and how long
   * the oldest has waited, in seconds (null when none waits).
   */
  ordersToRefresh: number;
  oldestOrderToRefreshSeconds: number | null;
  /**
   * Jobs locked longer than their task can run (JOB_RUN_LIMIT_SECONDS): held by a pool that does not run
   * them. Normally 0: the worker releases such a job within seconds. At most 20 listed, the longest first.
   */
  lockedTooLong: number;
  lockedTooLongJobs: LockedTooLongJob[];
  /**
   * Orders applied from an order.status_changed payload and not yet confirmed by a fetch
   * (`fetched_version < version`), and how long the oldest has been so, in seconds (null when none is).
   * The worker confirms each within CONFIRM_WITHIN_SECONDS.
   */
  ordersUnconfirmed: number;
  oldestUnconfirmedSeconds: number | null;
}

export interface FailedJob {
  id: number;
  task: string;
  attempts: number;
  maxAttempts: number;
  /** Shortened, with anything secret-looking masked. */
  lastError: string | null;
  failedAt: string;
}

export interface EventMinute {
  /** Start of the minute, ISO 8601 UTC. */
  minute: string;
  counts: OutcomeCounts;
}
