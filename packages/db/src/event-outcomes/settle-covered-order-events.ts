import type { Sql, TransactionSql } from "../connection/connect.ts";

/** What the write that answered an order knew, for judging its events. */
export interface OrderWrite {
  /** The version the replica held before this write (null: it had no copy). */
  versionBefore: number | null;
  /**
   * When the fetch that wrote or confirmed the replica's copy started, on Postgres's clock (null: no fetch
   * started after these events were received, as for events stored after the fetch).
   */
  receivedBefore: Date | null;
}

export interface OrderEventsToSettle {
  /** Events named by id: a batch's claimed events, a catch-up page's stored ones, process_events' own. */
  events?: readonly ({ eventId: string } & OrderWrite)[];
  /** Every open order event of these orders: pending, or failed earlier and now repaired. */
  orders?: readonly ({ merchantId: string; orderId: string } & OrderWrite)[];
}

/**
 * Settles, in ONE statement, the order events the replica now covers, whoever wrote the copy it holds.
 *
 * Coverage: an order event is covered when the replica holds its version or newer. An event without a
 * version (the spec always sends one; this is defensive) is covered only when it was received before the
 * fetch that wrote or confirmed the replica's copy started. A covered event is `stale` when its version is
 * at or below the version the replica held before this write, else `applied`. The rest stay as they were:
 * each has a queue row or a refresh_order job that a later fetch answers.
 *
 * Events named by id are found by primary key (the order batch's hot path); `orders` finds them through
 * the order. The statement is sent at once (`execute`), not when awaited, so that the order applier's
 * COMMIT can travel right behind it. Resolves with how many it settled, by outcome.
 */
export function settleCoveredOrderEvents(
  sql: Sql | TransactionSql,
  { events = [], orders = [] }: OrderEventsToSettle,
): Promise<Record<string, number>> {
  if (events.length === 0 && orders.length === 0) return Promise.resolve({});
  return sql<{ outcome: string; n: number }[]>`
    with judged (id, version_before, received_before) as (
      select * from unnest(
        ${events.map((e) => e.eventId)}::text[],
        ${events.map((e) => e.versionBefore)}::bigint[],
        ${events.map((e) => iso(e.receivedBefore))}::timestamptz[]
      )
      union all
      select e.id, b.version_before, b.received_before
      from unnest(
        ${orders.map((o) => o.merchantId)}::text[],
        ${orders.map((o) => o.orderId)}::text[],
        ${orders.map((o) => o.versionBefore)}::bigint[],
        ${orders.map((o) => iso(o.receivedBefore))}::timestamptz[]
      ) as b(merchant_id, order_id, version_before, received_before)
      join sync.events e on e.order_id = b.order_id and e.merchant_id = b.merchant_id
    ),
    settled as (
      update sync.events as e
      set outcome = case when e.order_version <= j.version_before then 'stale' else 'applied' end,
          error = null, outcome_at = now()
      from judged j, replica.orders o
      where e.id = j.id and o.id = e.order_id and e.type like 'order.%' and e.outcome in ('pending', 'failed')
        and (e.order_version <= o.version or (e.order_version is null and e.received_at <= j.received_before))
      returning e.outcome
    )
    select outcome, count(*)::int as n from settled group by outcome`
    .execute()
    .then((settled) => Object.fromEntries(settled.map((r) => [r.outcome, r.n])));
}

/** postgres.js types an array of Dates as one timestamptz: the times go as text, cast in the statement. */
const iso = (at: Date | null) => at?.toISOString() ?? null;
