import {
  type RefreshedSettle,
  type SettledOutcome,
  type Sql,
  settleRefreshedEvents,
  type TransactionSql,
} from "@loops-sync/db";
import { brandIdOf, type EventRoute, jobIdOf, routeEvent } from "./route-event.ts";

export interface SettleRoutedOptions {
  merchantId: string;
  route: Exclude<EventRoute, "order" | "unhandled" | "revocation">;
  /** For route "job": only events naming this upstream job. */
  jobId?: string;
  /** For route "brand": only events naming this brand. */
  brandId?: string;
  /** Only events stored before this moment (those a fetch starting then covers). */
  receivedBefore: Date;
  outcome: SettledOutcome;
  error?: string;
}

/** What a routed settle did: how many events, and the newest of them (the feed names it as the cause). */
export type RoutedSettle = RefreshedSettle;

/**
 * Settles the merchant's open events that a refresh of `route` answers (the route table lives in routeEvent;
 * the transition, in @loops-sync/db's settleRefreshedEvents).
 */
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
  return settleRefreshedEvents(sql, ids, outcome, error);
}
