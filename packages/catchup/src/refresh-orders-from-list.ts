import type { Logger } from "@loops-sync/config";
import type { Sql } from "@loops-sync/db";
import type { SyncMerchantApi } from "@loops-sync/loops-client";
import { LoopsError } from "@loops-sync/loops-client";
import { applyOrderPage } from "./apply-order-page.ts";

export interface RefreshOrdersFromListOptions {
  sql: Sql;
  api: SyncMerchantApi;
  /** GET /orders?updated_since=: every order changed at or after it is listed. */
  updatedSince: Date;
  /** Orders per list page (1–100). Default: 100. */
  pageSize?: number;
  /** Cancels the walk between calls. Default: none. */
  signal?: AbortSignal;
  /** Default: none. */
  logger?: Logger;
}

export interface ListRefreshResult {
  pages: number;
  ordersSeen: number;
  /** Ids of orders this walk wrote into the replica. */
  changed: Set<string>;
  /** Every order the walk listed with the version the replica held before the walk (null: none). */
  previousVersions: Map<string, number | null>;
}

/**
 * The "few calls" path of catch-up: instead of one GET /orders/{id} per order an event names, walk
 * GET /orders?updated_since= pages (100 orders a call) and put each page through the version gate. Every
 * order changed since `updatedSince` has a current copy in the list, so afterwards the replica covers every
 * event created since then, except for orders changed again while the walk ran (their newer events stay
 * pending and the worker fetches them one by one).
 */
export async function refreshOrdersFromList({
  sql,
  api,
  updatedSince,
  pageSize = 100,
  signal,
  logger,
}: RefreshOrdersFromListOptions): Promise<ListRefreshResult> {
  const result: ListRefreshResult = {
    pages: 0,
    ordersSeen: 0,
    changed: new Set(),
    previousVersions: new Map(),
  };
  const seenCursors = new Set<string>();
  let cursor: string | undefined;
  for (;;) {
    signal?.throwIfAborted();
    const page = await api.orders.list(
      { updated_since: updatedSince.toISOString(), limit: pageSize, ...(cursor ? { cursor } : {}) },
      signal ? { signal } : {},
    );
    // Rejected items go through too, so each is recorded with its reason instead of vanishing.
    const applied = await applyOrderPage(sql, [...page.data, ...page.rejected.map((r) => r.item)], {
      openEvent: true,
      source: "catchup",
    });
    result.pages++;
    result.ordersSeen += page.data.length;
    for (const id of applied.changed) result.changed.add(id);
    // An order listed twice (changed while the walk ran) keeps the version from before the walk.
    for (const [id, version] of applied.previousVersions) {
      if (!result.previousVersions.has(id)) result.previousVersions.set(id, version);
    }
    for (const bad of applied.invalid) {
      logger?.warn({ orderId: bad.orderId, reason: bad.reason }, "order from the list not stored");
    }
    if (!page.next_cursor) return result;
    if (seenCursors.has(page.next_cursor)) {
      throw LoopsError.badResponse("GET", "/orders", "next_cursor", "the same cursor came back twice");
    }
    seenCursors.add(page.next_cursor);
    cursor = page.next_cursor;
  }
}
