import type { Sql, TransactionSql } from "@loops-sync/db";

// Every change of a sync.forward_deliveries row is one of the named transitions below (docs/decisions.md,
// "Forwarding claims deliveries by lease"): claim (due → leased), settle (leased → deleted when acknowledged,
// back to due with a backoff, or dead past its age), retry (dead or waiting → due now) and recover (kept
// changes of a window → due again).

/** A claimed change, ready to send: `body` is the JSON that goes over the wire. */
export interface ClaimedChange {
  position: number;
  resource: string;
  resourceId: string;
  changedAt: Date;
  /** Attempts so far, this one included. */
  attempts: number;
  body: string;
}

/**
 * Leases up to `limit` due changes to `worker` for `leaseMs`: each the oldest live change of its resource (an
 * earlier change of the same resource, leased, waiting or failing, holds it back; a dead one does not). Rows
 * another claim holds are skipped, not waited for. Nothing is claimed while the endpoint's Retry-After holds
 * (`held_until`), and with `maxRps` (FORWARD_MAX_RPS) no more than the shared rate leaves room for. The body is built here, so `data` is the resource as
 * mirrored now: the upstream JSON (`raw`) of its replica row, null for a delete or a row gone since.
 */
export async function claimDeliveries(
  sql: Sql,
  { worker, limit, leaseMs, maxRps }: { worker: string; limit: number; leaseMs: number; maxRps?: number },
): Promise<Claimed> {
  if (maxRps === undefined)
    return { changes: await claim(sql, { worker, limit, leaseMs }), nextSlotMs: null };
  // The rate row stays locked from the room to the spend, so two workers never both spend the same room.
  return (await sql.begin(async (tx) => {
    const [rate] = await tx<{ room: number; wait_ms: number }[]>`
      select room, wait_ms from sync.forward_rate_room(${maxRps}::int)`;
    const room = rate?.room ?? 0;
    const changes = room > 0 ? await claim(tx, { worker, limit: Math.min(limit, room), leaseMs }) : [];
    if (changes.length > 0) await tx`select sync.spend_forward_rate(${changes.length}::int)`;
    // Out of room while more may be due: ask again when the next slot begins.
    const capped = room < limit && changes.length === room;
    return { changes, nextSlotMs: capped ? Math.max(1, rate?.wait_ms ?? 100) : null };
  })) as Claimed;
}

/** What a claim got, and, when FORWARD_MAX_RPS left no more room, when to claim again. */
export interface Claimed {
  changes: ClaimedChange[];
  /** Milliseconds until the rate cap has room again; null when the cap did not limit this claim. */
  nextSlotMs: number | null;
}

// The body's CASE has one branch per resource of CHANGE_RESOURCES (@loops-sync/schema, the feed's one list):
// test/workspace/change-feed-writers.test.ts holds it to that list.
async function claim(
  sql: Sql | TransactionSql,
  { worker, limit, leaseMs }: { worker: string; limit: number; leaseMs: number },
): Promise<ClaimedChange[]> {
  const rows = await sql<
    {
      position: number;
      resource: string;
      resource_id: string;
      changed_at: Date;
      attempts: number;
      body: string;
    }[]
  >`
    with due as (
      select d.position from sync.forward_deliveries d
      where d.dead_at is null and d.next_attempt_at <= now()
        and (d.leased_until is null or d.leased_until < now())
        and not exists (select 1 from sync.forward_progress p where p.held_until > now())
        and not exists (
          select 1 from sync.forward_deliveries e
          where e.resource = d.resource and e.resource_id = d.resource_id and e.position < d.position
            and e.dead_at is null)
      order by d.position
      limit ${limit}
      for update of d skip locked
    ), claimed as (
      update sync.forward_deliveries d
      set leased_until = now() + ${leaseMs} * interval '1 millisecond', leased_by = ${worker},
          attempts = d.attempts + 1
      from due where d.position = due.position
      returning d.position, d.attempts
    )
    select c.position, c.resource, c.resource_id, c.changed_at, k.attempts,
      json_build_object(
        'position', c.position, 'resource', c.resource, 'resource_id', c.resource_id,
        'merchant_id', c.merchant_id, 'operation', c.operation, 'version', c.version,
        'previous_version', c.previous_version, 'status', c.status, 'previous_status', c.previous_status,
        'source', c.source, 'event_id', c.event_id, 'changed_at', c.changed_at,
        'data', case when c.operation = 'delete' then null else case c.resource
          when 'order' then (select r.raw from replica.orders r where r.id = c.resource_id)
          when 'menu' then (select r.raw from replica.menus r where r.brand_id = c.resource_id)
          when 'brand' then (select r.raw from replica.brands r where r.id = c.resource_id)
          when 'location' then (select r.raw from replica.locations r where r.id = c.resource_id)
          when 'channel_connection' then
            (select r.raw from replica.channel_connections r where r.id = c.resource_id)
          when 'channel' then (select r.raw from replica.channels r where r.id = c.resource_id)
          when 'merchant' then (select r.raw from replica.merchants r where r.id = c.resource_id)
          when 'connection' then (select r.raw from replica.connections r where r.id = c.resource_id)
          when 'job' then (select r.raw from replica.jobs r where r.id = c.resource_id)
        end end)::text as body
    from claimed k join replica.changes c on c.position = k.position
    order by c.position`;
  return rows.map((r) => ({
    position: r.position,
    resource: r.resource,
    resourceId: r.resource_id,
    changedAt: r.changed_at,
    attempts: r.attempts,
    body: r.body,
  }));
}

/** A failed attempt: the short error for status, and when to try again. */
export interface FailedAttempt {
  position: number;
  error: string;
  retryInMs: number;
  /** The endpoint's Retry-After (a 429 or 503), bounded: every worker holds its deliveries this long. */
  holdMs?: number;
}

/**
 * Settles attempts in one statement: acknowledged changes are deleted (whoever held them: a 2xx is final);
 * failed ones go back to due after their backoff, or are dead once older than `maxAgeMs` (counted from the
 * change's commit or the retry that revived it). Only this worker's leases are moved back (one that expired and
 * was claimed again belongs to its new holder). Also records the endpoint's last answers, and holds every
 * worker's claims for the longest Retry-After among them. Returns the positions that died.
 */
export async function settleDeliveries(
  sql: Sql,
  {
    worker,
    delivered,
    failed,
    maxAgeMs,
  }: { worker: string; delivered: readonly number[]; failed: readonly FailedAttempt[]; maxAgeMs: number },
): Promise<number[]> {
  if (delivered.length === 0 && failed.length === 0) return [];
  const lastFailure = failed.at(-1)?.error ?? null;
  const holdMs = Math.max(0, ...failed.map((f) => f.holdMs ?? 0));
  const rows = await sql<{ position: number }[]>`
    with acked as (
      delete from sync.forward_deliveries where position = any(${delivered as number[]}::bigint[])
    ), retried as (
      update sync.forward_deliveries d
      set leased_until = null, leased_by = null, last_error = f.error,
          next_attempt_at = now() + f.retry_ms * interval '1 millisecond',
          dead_at = case when d.age_from < now() - ${maxAgeMs} * interval '1 millisecond' then now() end
      from unnest(${failed.map((f) => f.position)}::bigint[], ${failed.map((f) => f.error)}::text[],
                  ${failed.map((f) => f.retryInMs)}::bigint[]) as f(position, error, retry_ms)
      where d.position = f.position and d.leased_by = ${worker}
      returning d.position, d.dead_at
    ), endpoint as (
      update sync.forward_progress set
        last_success_at = case when ${delivered.length}::int > 0 then now() else last_success_at end,
        last_failure_at = case when ${failed.length}::int > 0 then now() else last_failure_at end,
        last_failure = coalesce(${lastFailure}::text, last_failure),
        held_until = case when ${holdMs}::int > 0
          then greatest(held_until, now() + ${holdMs}::int * interval '1 millisecond') else held_until end
    )
    select position from retried where dead_at is not null`;
  return rows.map((r) => r.position);
}

/** What `forward retry` did. */
export interface RetryResult {
  /** Positions made due now, ascending. */
  retried: number[];
  /**
   * Dead positions dropped instead of revived: a newer change of the same resource was delivered already, or
   * is being attempted, so sending the old one now would put it after the newer one at the endpoint.
   */
  superseded: number[];
}

/**
 * Makes changes due now (`loops-sync forward retry`): those waiting out a backoff and, with `dead`, the dead
 * ones too, whose max age then counts from now. A dead change whose resource has a newer change that was
 * delivered (gone from the queue, the scan past it) or is live and attempted is superseded: it is deleted,
 * not sent after its successor. Lifts the endpoint's Retry-After hold (the operator says it is back) and wakes
 * the forwarders (NOTIFY loops_sync_forward).
 */
export async function retryDeliveries(sql: Sql, { dead }: { dead: boolean }): Promise<RetryResult> {
  return (await sql.begin(async (tx) => {
    const superseded = dead
      ? await tx<{ position: number }[]>`
          delete from sync.forward_deliveries d
          where d.dead_at is not null and exists (
            select 1 from replica.changes c, sync.forward_progress p
            where c.resource = d.resource and c.resource_id = d.resource_id
              and c.position > d.position and c.position <= p.scanned_through
              and not exists (
                select 1 from sync.forward_deliveries n
                where n.position = c.position and (n.dead_at is not null or n.attempts = 0)))
          returning d.position`
      : [];
    const rows = await tx<{ position: number }[]>`
      update sync.forward_deliveries
      set next_attempt_at = now(), dead_at = null,
          age_from = case when dead_at is not null then now() else age_from end
      where (dead_at is null and next_attempt_at > now() and (leased_until is null or leased_until < now()))
         or (${dead} and dead_at is not null)
      returning position`;
    await tx`update sync.forward_progress set held_until = null`;
    await tx`select pg_notify(${FORWARD_CHANNEL}, '')`;
    return {
      retried: rows.map((r) => r.position).sort((a, b) => a - b),
      superseded: superseded.map((r) => r.position).sort((a, b) => a - b),
    };
  })) as RetryResult;
}

/** Why `recoverDeliveries` sent nothing. */
export type RecoverRefusal =
  | { reason: "never_forwarded" }
  /** Prune removed changes of the window; `oldestKeptAt` is the oldest change kept (null: none is). */
  | { reason: "pruned"; oldestKeptAt: Date | null };

/** What `forward recover` queued: every kept change of the window, by position. */
export interface RecoverResult {
  positions: number[];
}

/**
 * Queues again every kept change committed in [since, until) (`loops-sync forward recover`), only
 * `resources` when given, up to the scan's position (later ones are queued by the scan anyway). Each is due
 * now with its max age counted from now; one already waiting or dead is made due the same way, one in flight
 * is left to its holder. The claim's rule sends them in position order per resource. Refuses a window that
 * starts before what prune kept, since it could not be sent whole. Wakes the forwarders.
 */
export async function recoverDeliveries(
  sql: Sql,
  { since, until, resources }: { since: Date; until?: Date; resources: readonly string[] },
): Promise<RecoverResult | RecoverRefusal> {
  return (await sql.begin(async (tx) => {
    const [progress] = await tx<{ scanned: number }[]>`
      select scanned_through as scanned from sync.forward_progress`;
    if (!progress) return { reason: "never_forwarded" };
    const [kept] = await tx<{ pruned: number; oldest: Date | null }[]>`
      select s.pruned_through as pruned,
        (select c.changed_at from replica.changes c order by c.position limit 1) as oldest
      from replica.change_feed_state s`;
    if (kept && kept.pruned > 0 && (kept.oldest === null || since < kept.oldest)) {
      return { reason: "pruned", oldestKeptAt: kept.oldest };
    }
    const rows = await tx<{ position: number }[]>`
      insert into sync.forward_deliveries (position, resource, resource_id, changed_at, age_from)
      select c.position, c.resource, c.resource_id, c.changed_at, now()
      from replica.changes c
      where c.changed_at >= ${since} and (${until ?? null}::timestamptz is null or c.changed_at < ${until ?? null}::timestamptz)
        and c.position <= ${progress.scanned}::bigint
        and (cardinality(${resources as string[]}::text[]) = 0 or c.resource = any(${resources as string[]}::text[]))
      order by c.position
      on conflict (position) do update set next_attempt_at = now(), dead_at = null, age_from = now()
        where sync.forward_deliveries.leased_until is null or sync.forward_deliveries.leased_until < now()
      returning position`;
    await tx`select pg_notify(${FORWARD_CHANNEL}, '')`;
    return { positions: rows.map((r) => r.position).sort((a, b) => a - b) };
  })) as RecoverResult | RecoverRefusal;
}

/** The channel `retryDeliveries` wakes the forwarders on. */
export const FORWARD_CHANNEL = "loops_sync_forward";
