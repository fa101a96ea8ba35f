import type { Sql, EventOutcome as StoredOutcome, TransactionSql } from "@loops-sync/db";
import { brandIdOf, type EventRoute, jobIdOf, routeEvent } from "./route-event.ts";

/** An outcome the worker records (every one but `pending`). */
export type Outcome = Exclude<StoredOutcome, "pending">;

export interface EventOutcome {
  id: string;
  outcome: Outcome;
  error?: string | undefined;
}

/** Records outcomes of events still pending; an event another job already settled keeps its outcome. */
export async function settleEvents(
  sql: Sql | TransactionSql,
  outcomes: readonly EventOutcome[],
): Promise<void> {
  if (outcomes.length === 0) return;
  await sql`
    update sync.events as e set outcome = s.outcome, error = s.error, outcome_at = now()
    from unnest(
      ${outcomes.map((o) => o.id)}::text[],
      ${outcomes.map((o) => o.outcome)}::text[],
      ${outcomes.map((o) => o.error ?? null)}::text[]
    ) as s(id, outcome, error)
    where e.id = s.id and e.outcome = 'pending'`;
}

export interface SettleRoutedOptions {
  merchantId: string;
  route: Exclude<EventRoute, "order" | "unhandled" | "revocation">;
  /** For route "job": only events naming this upstream job. */
  jobId?: string;
  /** For route "brand": only events naming this brand. */
  brandId?: string;
  /** Only events stored before this moment (those a fetch starting then covers). */
  receivedBefore: Date;
  outcome: Outcome;
  error?: string;
}

/** What a routed settle did: how many events, and the newest of them (the feed names it as the cause). */
export interface RoutedSettle {
  count: number;
  newest: { id: string; source: "webhook" | "catchup" | "cli" } | null;
}

/** Settles the merchant's open events that a refresh of `route` answers (the route table lives in routeEvent). */
export async function settleRoutedEvents(
  sql: Sql | TransactionSql,
  { merchantId, route, jobId, brandId, receivedBefore, outcome, error }: SettleRoutedOptions,
): Promise<RoutedSettle> {
  const open = await sql<{ id: string; type: string; data: unknown }[]>`
    select id, type, payload -> 'data' as data from sync.events
    where merchant_id = ${merchantId} and outcome in ('pending', 'failed') and type not like 'order.%'
      and received_at <= ${receivedBefore}`;
  const ids = open
    .filter(
      (e) =>
        routeEvent(e.type) === route &&
        (jobId === undefined || jobIdOf(e.data) === jobId) &&
        (brandId === undefined || brandIdOf(e.type, e.data) === brandId),
    )
    .map((e) => e.id);
  if (ids.length === 0) return { count: 0, newest: null };
  // A failure never overwrites an earlier success of the same refresh.
  const [newest] = await sql<{ id: string; source: "webhook" | "catchup" | "cli"; count: number }[]>`
    with settled as (
      update sync.events set outcome = ${outcome}, error = ${error ?? null}, outcome_at = now()
      where id = any(${ids}::text[]) and (outcome = 'pending' or ${outcome} <> 'failed')
      returning id, source, created_at
    )
    select id, source, (select count(*)::int from settled) as count
    from settled order by created_at desc, id desc limit 1`;
  return { count: newest?.count ?? 0, newest: newest ? { id: newest.id, source: newest.source } : null };
}
