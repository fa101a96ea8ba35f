import type { Logger } from "@loops-sync/config";
import { type Sql, storeEventsAndEnqueue } from "@loops-sync/db";
import type { Event } from "@loops-sync/loops-client";
import type { CatchupMerchantApi } from "./catchupApi.ts";
import { advanceEventCursor } from "./eventCursor.ts";
import { findUncoveredOrders } from "./findUncoveredOrders.ts";
import { refreshOrdersFromList } from "./refreshOrdersFromList.ts";
import { settleCoveredOrderEvents } from "./settleCoveredOrderEvents.ts";

/** Listed from this far before the oldest event that asks for an order, in case its updated_at is a bit older. */
export const LIST_MARGIN_MS = 60_000;

export interface StoreEventPageContext {
  sql: Sql;
  api: CatchupMerchantApi;
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
  listPages: number;
  ordersRefreshed: number;
}

/**
 * One GET /events page: when it names at least `listThreshold` orders the replica does not cover, refresh
 * them from the order list first (each list page version-gated on its own: safe to repeat after a crash);
 * then, in ONE transaction, store the events (dedupe by id, one process_events job), settle the order events
 * the replica now covers, and move the cursor past the page.
 */
export async function storeEventPage(
  ctx: StoreEventPageContext,
  events: readonly Event[],
  last: Event,
): Promise<StoredEventPage> {
  const { sql, api, merchantId, applicationId, listThreshold, attempted, signal, logger } = ctx;
  const uncovered = (await findUncoveredOrders(sql, events, applicationId)).filter(
    (o) => !attempted.has(o.orderId),
  );
  let written = new Set<string>();
  let listPages = 0;
  if (uncovered.length >= listThreshold) {
    for (const o of uncovered) attempted.add(o.orderId);
    const oldest = Math.min(...uncovered.map((o) => o.since.getTime()));
    const refresh = await refreshOrdersFromList({
      sql,
      api,
      updatedSince: new Date(oldest - LIST_MARGIN_MS),
      signal,
      logger,
    });
    listPages = refresh.pages;
    written = refresh.changed;
  }
  const stored = await sql.begin(async (tx) => {
    const s = await storeEventsAndEnqueue(tx, events, { source: "catchup", applicationId });
    // Order events the list refresh already covers are settled here; their queue rows then cost the
    // refresher a claim and no call.
    const settled = await settleCoveredOrderEvents(tx, s.inserted, written);
    await advanceEventCursor(tx, merchantId, last, s.inserted.length);
    return { inserted: s.inserted.length, settled };
  });
  return { ...stored, listPages, ordersRefreshed: written.size };
}
