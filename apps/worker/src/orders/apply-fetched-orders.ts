import {
  type ChangeInput,
  payloadField,
  recordChanges,
  settleCoveredOrderEvents,
  type TransactionSql,
  taskName,
} from "@loops-sync/db";
import {
  type ApplyOrderResult,
  applyOrdersIfNewer,
  applyStatusFromEvents,
  DEFAULT_MAX_ATTEMPTS,
  MERCHANT_FLAG_PREFIX,
  type OrderInput,
  orderChanges,
  type StatusChain,
} from "@loops-sync/replica";
import type { WorkerContext } from "../worker-context.ts";

/** An order naming a location the replica lacks asks for a refresh of the merchant's locations this late. */
const LOCATIONS_DELAY_MS = 250;

/** A fetched order, or (`chain`) status events applied from their payloads (apply-status-from-events.ts). */
export type FetchedOrder = (
  | { order: OrderInput; chain?: undefined }
  | { chain: StatusChain; order?: undefined }
) & {
  /** The events whose queue rows the batch claimed for this order: settled with its apply. */
  eventIds: readonly string[];
  /** When the claim of those rows started (none: a version-less event among them stays pending). */
  receivedBefore?: Date | undefined;
};

export interface AppliedGroup {
  /** One per fetched order, in order. */
  applied: ApplyOrderResult[];
  /** The feed's rows for the orders the group changed: the caller records them last ({@link recordChanges}). */
  changes: ChangeInput[];
  /** The group's settled events, by outcome. */
  outcomes: Record<string, number>;
}

export interface SentGroup {
  applied: ApplyOrderResult[];
  changes: ChangeInput[];
  /** The settle's count by outcome, once it has answered. */
  outcomes: Promise<Record<string, number>>;
  /** The statements sent after the apply and not waited for: the settle, the locations check, the feed. */
  tail: Promise<unknown>[];
}

/**
 * In the caller's transaction (the applier's): applies the fetched orders with ONE version-gated upsert,
 * settles their claimed events with ONE update ({@link settleCoveredOrderEvents}: `stale` or `applied`), asks
 * for a locations refresh where an order names a location the replica lacks, and records the orders it
 * changed in the change feed. Waits only for the apply's answer: the settle, the locations check and the
 * feed's insert are sent (none reads what another writes; the feed's goes last) but not waited for, so they
 * can travel with the COMMIT.
 */
export async function sendFetchedOrders(
  tx: TransactionSql,
  group: readonly FetchedOrder[],
): Promise<SentGroup> {
  const sent = await sendApplied(tx, group);
  // Last before COMMIT: it takes the change feed's lock (recordChanges).
  return { ...sent, tail: [...sent.tail, recordChanges(tx, sent.changes)] };
}

async function sendApplied(tx: TransactionSql, group: readonly FetchedOrder[]): Promise<SentGroup> {
  if (group.length === 0) return { applied: [], changes: [], outcomes: Promise.resolve({}), tail: [] };
  const fetched = group.filter((e) => e.order !== undefined);
  const chained = group.filter((e) => e.chain !== undefined);
  // Sent together (one round trip): the chains' gate and the fetched orders' gate touch different orders.
  const [results, fromEvents] = await Promise.all([
    fetched.length === 0
      ? Promise.resolve([])
      : applyOrdersIfNewer(
          tx,
          fetched.map((e) => e.order!),
          fetched.map((e) => ({ eventIds: e.eventIds })),
        ),
    applyStatusFromEvents(
      tx,
      chained.map((e) => e.chain!),
    ),
  ]);
  const byId = new Map(results.map((a) => [a.id, a]));
  const chainById = new Map(fromEvents.map((a) => [a.id, a]));
  const applied = group.map((e) => (e.chain ? chainById.get(e.chain.orderId)! : byId.get(e.order!.id)!));
  const outcomes = settleCoveredOrderEvents(tx, {
    events: group.flatMap((e, i) =>
      e.eventIds.map((eventId) => ({
        eventId,
        versionBefore: applied[i]!.previousVersion,
        receivedBefore: e.receivedBefore ?? null,
      })),
    ),
  });
  const locations = refreshUnknownLocations(
    tx,
    results.filter((a) => a.changed).map((a) => a.id),
  );
  const changes = [...orderChanges(results, "webhook"), ...orderChanges(fromEvents, "event")];
  return { applied, changes, outcomes, tail: [outcomes, locations] };
}

/** Counts a committed group in the worker's metrics. */
export function countApplied({ metrics }: Pick<WorkerContext, "metrics">, group: AppliedGroup): void {
  for (const a of group.applied) metrics.orderApplies.inc({ changed: String(a.changed) });
  for (const [outcome, n] of Object.entries(group.outcomes)) metrics.events.inc({ outcome }, n);
}

/**
 * Orders that name a location the replica lacks: one statement adds a refresh of their merchants' locations
 * and channel connections (a `refresh_locations` job per merchant, keyed so a burst of such orders asks
 * once, in merchant order so two commits take the job keys in the same order). The job `enqueueJob` would
 * add, built in SQL because the merchants are found there: one statement can travel with the COMMIT.
 */
function refreshUnknownLocations(tx: TransactionSql, orderIds: readonly string[]): Promise<unknown> {
  if (orderIds.length === 0) return Promise.resolve();
  const runAt = new Date(Date.now() + LOCATIONS_DELAY_MS);
  return tx`
    select graphile_worker.add_job(
      ${taskName("refresh_locations")}::text,
      json_build_object(${payloadField("refresh_locations", "merchantId")}::text, m.merchant_id),
      run_at => ${runAt}::timestamptz,
      max_attempts => ${DEFAULT_MAX_ATTEMPTS},
      job_key => 'locations:' || m.merchant_id,
      flags => array[${MERCHANT_FLAG_PREFIX} || m.merchant_id],
      job_key_mode => 'preserve_run_at'
    )
    from (
      select distinct o.merchant_id from replica.orders o
      where o.id = any(${orderIds as string[]}::text[]) and o.location_id is not null
        and not exists (select 1 from replica.locations l where l.id = o.location_id)
      order by 1
    ) m`.execute();
}
