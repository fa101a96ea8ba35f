import type { Sql, TransactionSql } from "@loops-sync/db";
import { redactSecrets } from "./redact-secrets.ts";

/** Forwarding to FORWARD_URL (README.md, "Forwarding changes to your endpoint"), as `status` and the status page show it. */
export interface ForwardingStatus {
  /** FORWARD_URL without its query or credentials, as the last worker that started saw it. */
  endpoint: string | null;
  /**
   * `off` (no worker forwards: none recorded running within FORWARD_OFF_AFTER_SECONDS, FORWARD_URL unset or
   * the workers down), else `ok` (the last answer was a 2xx), `failing` (the last attempt failed), or `idle`
   * (nothing sent yet).
   */
  state: "off" | "ok" | "failing" | "idle";
  /** When a running forwarder last recorded itself (every 10 s); null after the last one stopped cleanly. */
  forwarderSeenAt: string | null;
  /** The endpoint's Retry-After holds every delivery until then; null when it does not. */
  heldUntil: string | null;
  lastSuccessAt: string | null;
  lastFailureAt: string | null;
  /** The last failure, short ("HTTP 503: …", "no answer within 10000 ms", "connection failed: ECONNREFUSED"). */
  lastFailure: string | null;
  /** Changes not delivered yet and not dead, those the scan has not reached included. */
  undelivered: number;
  /** Age of the oldest of them, in seconds (null when none waits). */
  oldestUndeliveredSeconds: number | null;
  /** Changes dead now (no 2xx within FORWARD_MAX_AGE_HOURS); `loops-sync forward retry --dead` sends them again. */
  dead: number;
  /** The 20 oldest dead changes. */
  deadChanges: DeadChange[];
}

export interface DeadChange {
  position: number;
  /** `chg_<position>`, the webhook-id the endpoint saw. */
  webhookId: string;
  resource: string;
  resourceId: string;
  attempts: number;
  changedAt: string;
  deadAt: string;
  lastError: string | null;
}

const iso = (d: Date | null): string | null => (d ? d.toISOString() : null);

/** Forwarding is `off` when no forwarder recorded itself for this long (they do every 10 s). */
export const FORWARD_OFF_AFTER_SECONDS = 60;

/** Forwarding's state, or null when forwarding was never turned on (no worker had FORWARD_URL). */
export async function readForwarding(sql: Sql | TransactionSql): Promise<ForwardingStatus | null> {
  const [progress] = await sql<
    {
      endpoint: string | null;
      last_success_at: Date | null;
      last_failure_at: Date | null;
      last_failure: string | null;
      seen_at: Date | null;
      held_until: Date | null;
      off: boolean;
      undelivered: number;
      oldest_seconds: number | null;
      dead: number;
    }[]
  >`
    select p.endpoint, p.last_success_at, p.last_failure_at, p.last_failure, p.seen_at,
      case when p.held_until > now() then p.held_until end as held_until,
      (p.seen_at is null or p.seen_at < now() - ${FORWARD_OFF_AFTER_SECONDS} * interval '1 second') as off,
      (select count(*) from sync.forward_deliveries where dead_at is null)::int
        + (select count(*) from replica.changes c where c.position > p.scanned_through)::int as undelivered,
      extract(epoch from now() - least(
        (select min(changed_at) from sync.forward_deliveries where dead_at is null),
        (select c.changed_at from replica.changes c where c.position > p.scanned_through
         order by c.position limit 1)))::float8 as oldest_seconds,
      (select count(*) from sync.forward_deliveries where dead_at is not null)::int as dead
    from sync.forward_progress p`;
  if (!progress) return null;
  const dead = await sql<
    {
      position: number;
      resource: string;
      resource_id: string;
      attempts: number;
      changed_at: Date;
      dead_at: Date;
      last_error: string | null;
    }[]
  >`
    select position, resource, resource_id, attempts, changed_at, dead_at, last_error
    from sync.forward_deliveries where dead_at is not null order by position limit 20`;
  const failing =
    progress.last_failure_at !== null &&
    (progress.last_success_at === null || progress.last_failure_at > progress.last_success_at);
  return {
    endpoint: progress.endpoint,
    state: progress.off ? "off" : failing ? "failing" : progress.last_success_at ? "ok" : "idle",
    forwarderSeenAt: iso(progress.seen_at),
    heldUntil: iso(progress.held_until),
    lastSuccessAt: iso(progress.last_success_at),
    lastFailureAt: iso(progress.last_failure_at),
    lastFailure: progress.last_failure === null ? null : redactSecrets(progress.last_failure),
    undelivered: progress.undelivered,
    oldestUndeliveredSeconds: progress.undelivered === 0 ? null : progress.oldest_seconds,
    dead: progress.dead,
    deadChanges: dead.map((d) => ({
      position: d.position,
      webhookId: `chg_${d.position}`,
      resource: d.resource,
      resourceId: d.resource_id,
      attempts: d.attempts,
      changedAt: d.changed_at.toISOString(),
      deadAt: d.dead_at.toISOString(),
      lastError: d.last_error === null ? null : redactSecrets(d.last_error),
    })),
  };
}
