import type { Sql } from "@loops-sync/db";

// Every change of a sync.forward_deliveries row is one of the named transitions below (docs/decisions.md,
// "Forwarding claims deliveries by lease"): claim (due → leased), settle (leased → deleted when acknowledged,
// back to due with a backoff, or dead past its age) and retry (dead or waiting → due now).

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
 * another claim holds are skipped, not waited for. The body is built here, so `data` is the resource as
 * mirrored now: the upstream JSON (`raw`) of its replica row, null for a delete or a row gone since.
 */
export async function claimDeliveries(
  sql: Sql,
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
}

/**
 * Settles attempts in one statement: acknowledged changes are deleted (whoever held them: a 2xx is final);
 * failed ones go back to due after their backoff, or are dead once older than `maxAgeMs` (counted from the
 * change's commit or the retry that revived it). Only this worker's leases are moved back (one that expired and
 * was claimed again belongs to its new holder). Also records the endpoint's last answers. Returns the
 * positions that died.
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
        last_failure = coalesce(${lastFailure}::text, last_failure)
    )
    select position from retried where dead_at is not null`;
  return rows.map((r) => r.position);
}

/**
 * Makes changes due now (`loops-sync forward retry`): those waiting out a backoff and, with `dead`, the dead
 * ones too, whose max age then counts from now. Wakes the forwarders (NOTIFY loops_sync_forward). Returns the
 * positions made due.
 */
export async function retryDeliveries(sql: Sql, { dead }: { dead: boolean }): Promise<number[]> {
  return sql.begin(async (tx) => {
    const rows = await tx<{ position: number }[]>`
      update sync.forward_deliveries
      set next_attempt_at = now(), dead_at = null,
          age_from = case when dead_at is not null then now() else age_from end
      where (dead_at is null and next_attempt_at > now() and (leased_until is null or leased_until < now()))
         or (${dead} and dead_at is not null)
      returning position`;
    await tx`select pg_notify(${FORWARD_CHANNEL}, '')`;
    return rows.map((r) => r.position).sort((a, b) => a - b);
  }) as Promise<number[]>;
}

/** The channel `retryDeliveries` wakes the forwarders on. */
export const FORWARD_CHANNEL = "loops_sync_forward";
