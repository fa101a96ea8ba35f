import { type Sql, type TransactionSql, wakeOrderRefreshers } from "@loops-sync/db";
import { type MerchantState, merchantStatus } from "@loops-sync/replica";

/**
 * Queue rows one batch considers; a full batch makes the refresher come back to the merchant at once. It
 * also bounds the advisory locks a batch holds (one per order): P / 2 batches × 100 per worker stay within
 * Postgres's lock table, which grows by 64 entries per connection the worker opens (docs/scaling.md).
 */
export const ORDER_BATCH_ROWS = 100;

/** One queued refresh: the order, the version its event announced, and that event. */
export interface QueuedOrder {
  order_id: string;
  version: number | null;
  event_id: string;
}

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

/** The replica does not cover a claimed order: it lacks it or holds it older, or an event gave no version. */
export function needsFetch(c: Claimed): boolean {
  return c.version === null || c.replica_version === null || c.replica_version < c.version;
}

/** What a claim found: the merchant's state and the orders it took. */
export interface ClaimResult {
  state: Pick<MerchantState, "status" | "pausedUntil">;
  claimed: Claimed[];
  /** Queued rows of orders another batch holds. */
  heldElsewhere: number;
  /** Queued rows of orders this batch has already (a join's claim leaves them). */
  heldHere: number;
}

/**
 * The batch's first statement (one round trip where there were three): reads the merchant's state and,
 * when it may be called, claims up to a batch of its queued rows, oldest first, whose orders it can lock
 * (`pg_try_advisory_xact_lock` per order; rows of an order another batch is fetching stay queued), one line
 * per order with the replica's version. The candidates and the locks are materialized CTEs, so a lock is
 * tried only for the rows this batch could claim. A batch's later claims (joins) run it again in the same
 * transaction, leaving the orders it has already (its own locks would let it take them twice).
 */
export async function claimOrders(
  tx: TransactionSql,
  merchantId: string,
  /** Orders the batch has already: their rows are left queued, and counted as held elsewhere. */
  exclude: readonly string[] = [],
  limit = ORDER_BATCH_ROWS,
): Promise<ClaimResult> {
  const rows = await tx<
    ({ status: string | null; paused_until: Date | null; held_elsewhere: number; held_here: number } & (
      | Claimed
      | { order_id: null }
    ))[]
  >`
    with state as materialized (
      select m.status, sync.paused_until(${merchantId}) as paused_until
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
    select s.status, s.paused_until, h.rows_left - h.held_here as held_elsewhere, h.held_here, g.*
    from state s cross join held h left join grouped g on true
    order by g.order_id`;
  const first = rows[0]!;
  const takenAt = performance.now();
  return {
    state: { status: merchantStatus(first.status), pausedUntil: first.paused_until },
    claimed: rows
      .filter((r): r is typeof r & Omit<Claimed, "taken_at"> => r.order_id !== null)
      .map((r) => ({ ...r, taken_at: takenAt })),
    heldElsewhere: first.held_elsewhere,
    heldHere: first.held_here,
  };
}

/**
 * Appends orders to the merchant's queue and wakes the refreshers (NOTIFY at commit). Used by process_events and by a batch that a 429 stopped.
 */
/**
 * Puts claimed rows back in the queue until `waitMs` after they were first queued (a version gap waiting to
 * fill), keeping when that was. In the batch's transaction: they are queued again only if its claim commits.
 */
export async function holdOrders(
  tx: TransactionSql,
  merchantId: string,
  rows: readonly { order_id: string; version: number | null; event_id: string; queued_at: string }[],
  /** How long after its first queueing a row waits. */
  waitMs: number,
): Promise<void> {
  if (rows.length === 0) return;
  await tx`
    insert into sync.order_refresh (merchant_id, order_id, version, event_id, queued_at, not_before)
    select ${merchantId}, r.order_id, r.version, r.event_id, r.queued_at,
           r.queued_at + make_interval(secs => ${waitMs / 1000})
    from unnest(
      ${rows.map((r) => r.order_id)}::text[], ${rows.map((r) => r.version)}::bigint[],
      ${rows.map((r) => r.event_id)}::text[], ${rows.map((r) => r.queued_at)}::timestamptz[]
    ) as r(order_id, version, event_id, queued_at)`;
}

export async function queueOrders(
  sql: Sql | TransactionSql,
  merchantId: string,
  orders: readonly QueuedOrder[],
): Promise<void> {
  if (orders.length === 0) return;
  await sql`
    with refreshing as (
      insert into sync.order_refresh (merchant_id, order_id, version, event_id)
      select ${merchantId}, o.order_id, o.version, o.event_id
      from unnest(
        ${orders.map((o) => o.order_id)}::text[],
        ${orders.map((o) => o.version)}::bigint[],
        ${orders.map((o) => o.event_id)}::text[]
      ) as o(order_id, version, event_id)
      returning merchant_id
    )
    ${wakeOrderRefreshers(sql)}`;
}
