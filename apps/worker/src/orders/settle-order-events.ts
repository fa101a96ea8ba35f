import type { Sql, TransactionSql } from "@loops-sync/db";

/** Marks the order's unsettled events with `outcome` (failed with the error, or skipped_revoked). */
export async function settleOrderEvents(
  sql: Sql | TransactionSql,
  merchantId: string,
  orderId: string,
  outcome: "failed" | "skipped_revoked",
  error?: string,
): Promise<void> {
  await sql`
    update sync.events set outcome = ${outcome}, error = ${error ?? null}, outcome_at = now()
    where merchant_id = ${merchantId} and order_id = ${orderId} and type like 'order.%' and outcome = 'pending'`;
}

export interface ResolveOrderEventsOptions {
  merchantId: string;
  orderId: string;
  /** The version the replica held before this fetch; events at or below it were stale. */
  versionBefore: number | null;
  /** When the fetch started: an event without a version is covered only if it was stored before. */
  receivedBefore: Date;
}

/**
 * Settles the order's events that the replica now covers (pending, or failed earlier and now repaired),
 * judged against the version stored now, whoever wrote it. Returns how many pending events, stored before
 * the fetch started, still speak of a newer version than the replica holds: the upstream is behind them.
 */
export async function resolveOrderEvents(
  tx: Sql | TransactionSql,
  { merchantId, orderId, versionBefore, receivedBefore }: ResolveOrderEventsOptions,
): Promise<{ settled: number; newerPending: number }> {
  const settled = await resolveOrderBatchEvents(tx, {
    merchantId,
    orders: [{ orderId, versionBefore }],
    receivedBefore,
  });
  const [row] = await tx<{ n: number }[]>`
    select count(*)::int as n from sync.events
    where merchant_id = ${merchantId} and order_id = ${orderId} and type like 'order.%' and outcome = 'pending'
      and order_version > coalesce((select version from replica.orders where id = ${orderId}), -1)
      -- Events stored after the fetch started have refresh jobs of their own.
      and received_at <= ${receivedBefore}`;
  return { settled: Object.values(settled).reduce((a, b) => a + b, 0), newerPending: row?.n ?? 0 };
}

export interface ResolveOrderBatchOptions {
  merchantId: string;
  /** The orders a batch refresh answered, each with the version the replica held before it. */
  orders: readonly { orderId: string; versionBefore: number | null }[];
  /** When the batch started: an event without a version is covered only if it was stored before. */
  receivedBefore: Date;
}

/**
 * Settles, in one statement, the events of these orders that the replica now covers (pending, or failed
 * earlier and now repaired), judged against the version stored now, whoever wrote it: `stale` at or below
 * the order's version before the fetch, `applied` above. The rest stay pending: each has a queue row of
 * its own (or a refresh_order job) that a later run answers. Returns how many it settled, by outcome.
 */
export async function resolveOrderBatchEvents(
  tx: Sql | TransactionSql,
  { merchantId, orders, receivedBefore }: ResolveOrderBatchOptions,
): Promise<Record<string, number>> {
  if (orders.length === 0) return {};
  const settled = await tx<{ outcome: string; n: number }[]>`
    with settled as (
      update sync.events as e
      set outcome = case when e.order_version <= b.version_before then 'stale' else 'applied' end,
          error = null, outcome_at = now()
      from unnest(${orders.map((o) => o.orderId)}::text[], ${orders.map((o) => o.versionBefore)}::bigint[])
        as b(order_id, version_before)
      join replica.orders o on o.id = b.order_id
      where e.order_id = b.order_id and e.merchant_id = ${merchantId} and e.type like 'order.%'
        and e.outcome in ('pending', 'failed')
        and (e.order_version <= o.version or (e.order_version is null and e.received_at <= ${receivedBefore}))
      returning e.outcome
    )
    select outcome, count(*)::int as n from settled group by outcome`;
  return Object.fromEntries(settled.map((r) => [r.outcome, r.n]));
}

/**
 * Settles, in one statement by primary key, the events whose queue rows a batch claimed, judged against the
 * version stored now, whoever wrote it: `stale` at or below the order's version before the batch's fetch,
 * `applied` above. An event whose version the replica still lacks (the upstream answered older) stays
 * pending: the batch hands its order to a refresh_order job. A version-less event is covered: it was
 * stored before the claim, so before the fetch. Returns how many it settled, by outcome.
 */
export function settleClaimedEvents(
  tx: Sql | TransactionSql,
  claims: readonly { claim: { event_ids: readonly string[] }; versionBefore: number | null }[],
): Promise<Record<string, number>> {
  const ids = claims.flatMap((c) => c.claim.event_ids);
  if (ids.length === 0) return Promise.resolve({});
  const before = claims.flatMap((c) => c.claim.event_ids.map(() => c.versionBefore));
  // Sent at once (`execute`), not when awaited: the order applier sends its COMMIT right behind it.
  return tx<{ outcome: string; n: number }[]>`
    with settled as (
      update sync.events as e
      set outcome = case when e.order_version <= b.version_before then 'stale' else 'applied' end,
          error = null, outcome_at = now()
      from unnest(${ids}::text[], ${before}::bigint[]) as b(id, version_before), replica.orders o
      where e.id = b.id and o.id = e.order_id and e.outcome in ('pending', 'failed')
        and (e.order_version is null or e.order_version <= o.version)
      returning e.outcome
    )
    select outcome, count(*)::int as n from settled group by outcome`
    .execute()
    .then((settled) => Object.fromEntries(settled.map((r) => [r.outcome, r.n])));
}
