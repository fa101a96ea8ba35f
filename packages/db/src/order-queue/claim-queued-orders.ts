import type { TransactionSql } from "../connection/connect.ts";

/** One order of a claim: its claimed queue rows, folded. */
export interface Claimed {
  order_id: string;
  /** Newest version the queued events announced; null when one of them did not say. */
  version: number | null;
  replica_version: number | null;
  /** The stored order's status (null when the replica lacks it): where a status event must chain from. */
  replica_status: string | null;
  /** The claimed rows' events, as plan-order.ts reads them. */
  events: ClaimedEvent[];
  rows: number;
  /** The events that queued the claimed rows: the ones this batch settles (migration 0017 linked the older rows). */
  event_ids: string[];
  /**
   * The claim statement's start, rounded up to the millisecond (a Date's precision): every claimed row, and
   * so its event, was committed before it. An event without a version counts as covered by this batch's
   * fetch only if it was received by then.
   */
  claimed_at: Date;
  /** Seconds the order's oldest claimed row waited in the queue before the claim (Postgres's clock). */
  queued_seconds: number;
  /** performance.now() when the claim answered: where the fetch stage starts. */
  taken_at: number;
}

/** One claimed row's event: what an order.status_changed payload says, and how long its row has waited. */
export interface ClaimedEvent {
  id: string;
  type: string;
  version: number | null;
  previous_status: string | null;
  status: string | null;
  /** The event's created_at as it wrote it. */
  at: string | null;
  /** Seconds since the row was first queued (Postgres's clock; a row put back keeps its first time). */
  age_seconds: number;
  queued_at: string;
}

/** What a claim found: the merchant's state as stored and the orders it took. */
export interface QueueClaim {
  /** `sync.merchants.status`; null for a merchant not known there. */
  status: string | null;
  /** `sync.paused_until(merchant)`: set while its calls are paused. */
  pausedUntil: Date | null;
  /** `sync.merchants.connection_id`: the connection this batch's calls are made under. */
  connectionId: string | null;
  claimed: Claimed[];
  /** Queued rows of orders another batch holds. */
  heldElsewhere: number;
  /** Queued rows of orders this batch has already (a join's claim leaves them). */
  heldHere: number;
}

/**
 * An order batch's claim (the queue's `claimed` transition), the batch's first statement (one round trip where there were three): reads the merchant's state and,
 * when it may be called, claims up to a batch of its queued rows, oldest first, whose orders it can lock
 * (`pg_try_advisory_xact_lock` per order; rows of an order another batch is fetching stay queued), one line
 * per order with the replica's version. The candidates and the locks are materialized CTEs, so a lock is
 * tried only for the rows this batch could claim. A batch's later claims (joins) run it again in the same
 * transaction, leaving the orders it has already (its own locks would let it take them twice).
 */
export async function claimQueuedOrders(
  tx: TransactionSql,
  merchantId: string,
  /** Orders the batch has already: their rows are left queued, and counted as held elsewhere. */
  exclude: readonly string[] = [],
  /** Most queue rows to take. */
  limit: number,
): Promise<QueueClaim> {
  const rows = await tx<
    ({
      status: string | null;
      paused_until: Date | null;
      connection_id: string | null;
      held_elsewhere: number;
      held_here: number;
    } & (Claimed | { order_id: null }))[]
  >`
    with state as materialized (
      select m.status, m.connection_id, sync.paused_until(${merchantId}) as paused_until
      from (select 1) as one left join sync.merchants m on m.id = ${merchantId}
    ),
    ready as materialized (
      select id, order_id from sync.order_refresh
      where merchant_id = ${merchantId} and (not_before is null or not_before <= statement_timestamp())
        and exists (select 1 from state where status is distinct from 'revoked' and paused_until is null)
      order by id limit ${limit} for update skip locked
    ),
    -- Rows waiting for a version gap to fill (migration 0019) go with a ready row of their order: the event
    -- that fills the gap is claimed with them, so they chain at once.
    waiting as materialized (
      select id, order_id from sync.order_refresh
      where merchant_id = ${merchantId} and not_before > statement_timestamp()
        and order_id in (select order_id from ready)
      for update skip locked
    ),
    candidates as materialized (select id, order_id from ready union all select id, order_id from waiting),
    mine as materialized (
      select id from candidates
      where order_id <> all(${exclude as string[]}::text[])
        and pg_try_advisory_xact_lock(hashtextextended(${`order:${merchantId}:`} || order_id, 0))
    ),
    claimed as (
      delete from sync.order_refresh where id in (select id from mine)
      returning order_id, version, event_id, queued_at
    ),
    grouped as (
      select c.order_id,
             case when bool_or(c.version is null) then null else max(c.version) end as version,
             o.version as replica_version, o.status as replica_status, count(*)::int as rows,
             coalesce(jsonb_agg(jsonb_build_object(
               'id', e.id, 'type', e.type, 'version', e.order_version,
               'previous_status', e.payload #>> '{data,previous_status}', 'status', e.payload #>> '{data,status}',
               'at', e.payload ->> 'created_at', 'queued_at', c.queued_at,
               'age_seconds', extract(epoch from statement_timestamp() - c.queued_at)::float8
             ) order by e.order_version) filter (where e.id is not null), '[]') as events,
             date_trunc('milliseconds', statement_timestamp() + interval '999 microseconds') as claimed_at,
             extract(epoch from statement_timestamp() - min(c.queued_at))::float8 as queued_seconds,
             coalesce(array_agg(distinct c.event_id) filter (where c.event_id is not null), '{}') as event_ids
      from claimed c left join replica.orders o on o.id = c.order_id left join sync.events e on e.id = c.event_id
      group by c.order_id, o.version, o.status
    ),
    held as (
      select (select count(*) from candidates)::int - (select count(*) from mine)::int as rows_left,
             (select count(*) from candidates where order_id = any(${exclude as string[]}::text[]))::int as held_here
    )
    select s.status, s.paused_until, s.connection_id, h.rows_left - h.held_here as held_elsewhere, h.held_here, g.*
    from state s cross join held h left join grouped g on true
    order by g.order_id`;
  const first = rows[0]!;
  const takenAt = performance.now();
  return {
    status: first.status,
    pausedUntil: first.paused_until,
    connectionId: first.connection_id,
    claimed: rows
      .filter((r): r is typeof r & Omit<Claimed, "taken_at"> => r.order_id !== null)
      .map((r) => ({ ...r, taken_at: takenAt })),
    heldElsewhere: first.held_elsewhere,
    heldHere: first.held_here,
  };
}
