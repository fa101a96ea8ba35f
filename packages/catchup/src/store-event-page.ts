import type { Logger } from "@loops-sync/config";
import {
  orderIdOf,
  planForCurrentSize,
  type Sql,
  settleCoveredOrderEvents,
  storeEventsAndEnqueue,
  unstorableReason,
} from "@loops-sync/db";
import type { Event, SyncMerchantApi } from "@loops-sync/loops-client";
import { advanceEventCursor } from "./event-cursor.ts";
import { findUncoveredOrders } from "./find-uncovered-orders.ts";
import { type ListRefreshResult, refreshOrdersFromList } from "./refresh-orders-from-list.ts";
import { storeStorableEvents } from "./store-storable-events.ts";

/** Listed from this far before the oldest event that asks for an order, in case its updated_at is a bit older. */
export const LIST_MARGIN_MS = 60_000;

export interface StoreEventPageContext {
  sql: Sql;
  api: SyncMerchantApi;
  merchantId: string;
  applicationId: string | undefined;
  listThreshold: number;
  /** Orders a list refresh of this run already tried; they never trigger another one (upstream may lag). */
  attempted: Set<string>;
  signal: AbortSignal | undefined;
  logger: Logger | undefined;
}

export interface StoredEventPage {
  inserted: number;
  settled: number;
  /** Events Postgres can never store, recorded in sync.refused_events and passed by the cursor. */
  refused: number;
  listPages: number;
  ordersRefreshed: number;
}

/**
 * One GET /events page: when it names at least `listThreshold` orders the replica does not cover, refresh
 * them from the order list first (each list page version-gated on its own: safe to repeat after a crash);
 * then, in ONE transaction, store the events (dedupe by id, one process_events job), settle the order events
 * the replica now covers, and move the cursor past the page. When Postgres refuses the page for the content
 * of some of its events (`unstorableReason`), the transaction is run again isolating them: they are
 * recorded as refused, the others stored, and the cursor still moves past the page.
 */
export async function storeEventPage(
  ctx: StoreEventPageContext,
  events: readonly Event[],
  last: Event,
): Promise<StoredEventPage> {
  const { sql, api, merchantId, applicationId, listThreshold, attempted, signal, logger } = ctx;
  const page = await findUncoveredOrders(sql, events, applicationId);
  const uncovered = page.uncovered.filter((o) => !attempted.has(o.orderId));
  let refresh: ListRefreshResult | undefined;
  if (uncovered.length >= listThreshold) {
    for (const o of uncovered) attempted.add(o.orderId);
    const oldest = Math.min(...uncovered.map((o) => o.since.getTime()));
    refresh = await refreshOrdersFromList({
      sql,
      api,
      updatedSince: new Date(oldest - LIST_MARGIN_MS),
      signal,
      logger,
    });
  }
  const versionBefore = (orderId: string) =>
    refresh?.previousVersions.has(orderId)
      ? refresh.previousVersions.get(orderId)!
      : (page.versions.get(orderId) ?? null);
  const orderEvents = new Map(
    events.flatMap((e) => {
      const orderId = e.type.startsWith("order.") ? orderIdOf(e.type, e.data) : undefined;
      return orderId ? [[e.id, orderId] as const] : [];
    }),
  );
  const store = (isolate: boolean) =>
    sql.begin(async (tx) => {
      // The settle looks the page's events up by id: planned for sync.events as it is now.
      void planForCurrentSize(tx);
      const options = { source: "catchup", applicationId, logger } as const;
      const s = isolate
        ? await storeStorableEvents(tx, merchantId, events, options)
        : { ...(await storeEventsAndEnqueue(tx, events, options)), refused: [] };
      // Order events the replica already covers are settled here; their queue rows then cost the refresher a
      // claim and no call. They were stored after the list was fetched, so one without a version is not
      // covered (receivedBefore null): the worker fetches its order.
      const settled = await settleCoveredOrderEvents(tx, {
        events: s.inserted.flatMap((eventId) => {
          const orderId = orderEvents.get(eventId);
          return orderId ? [{ eventId, versionBefore: versionBefore(orderId), receivedBefore: null }] : [];
        }),
      });
      await advanceEventCursor(tx, merchantId, last, s.inserted.length);
      return {
        inserted: s.inserted.length,
        settled: Object.values(settled).reduce((a, b) => a + b, 0),
        refused: s.refused.length,
      };
    });
  // The whole page in one go first: isolating costs a savepoint per try, and almost every page is storable.
  const stored = await store(false).catch((error: unknown) => {
    if (!unstorableReason(error)) throw error;
    return store(true);
  });
  return { ...stored, listPages: refresh?.pages ?? 0, ordersRefreshed: refresh?.changed.size ?? 0 };
}
