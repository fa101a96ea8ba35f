import type { SyncMerchantApi } from "@loops-sync/loops-client";
import type { LimitFunction } from "p-limit";
import type { Claimed } from "./claim-orders.ts";

/** An order listed on a page, by id (its upstream JSON, not yet checked). */
export type ListPage = Map<string, unknown>;

export interface ReadListPageOptions {
  /** The worker's bound on calls in flight: the page takes one slot, as a single read does. */
  fetchSlots: LimitFunction;
  signal: AbortSignal;
  /** Whether the batch's calls stopped (a 429, a pause, a revocation) before the slot came: then nothing is read. */
  stopped: () => boolean;
}

/**
 * Several orders to fetch: ONE `GET /orders?updated_since=` page (the 100 orders updated last, newest first)
 * from a second before their oldest event. Only the first page is read: paging on while orders keep changing
 * could skip one that moved to the front, so an order the page does not hold at the version its events
 * announced is fetched alone instead ({@link listedOrder}). Undefined when an event gives no time.
 */
export function readListPage(
  api: SyncMerchantApi,
  claims: readonly Claimed[],
  { fetchSlots, signal, stopped }: ReadListPageOptions,
): Promise<ListPage> | undefined {
  const times = claims.flatMap((c) => c.events.map((e) => (e.at ? Date.parse(e.at) : Number.NaN)));
  if (times.length === 0 || times.some(Number.isNaN)) return undefined;
  const updatedSince = new Date(Math.min(...times) - 1000).toISOString();
  const page = fetchSlots(async () => {
    if (stopped() || signal.aborted) return new Map<string, unknown>();
    const listed = await api.orders.list({ updated_since: updatedSince, limit: 100 }, { signal });
    return new Map<string, unknown>(listed.data.map((o) => [o.id, o]));
  });
  // Each order awaits it; a failed page sends them to their own fetches (which meet the same refusal).
  page.catch(() => {});
  return page;
}

/** The claimed order from the page when it holds the version its events announced, else undefined. */
export async function listedOrder(page: Promise<ListPage>, claim: Claimed): Promise<unknown> {
  const listed = await page.then(
    (p) => p.get(claim.order_id) as { version?: unknown } | undefined,
    () => undefined,
  );
  if (!listed || typeof listed.version !== "number" || listed.version < (claim.version ?? 0))
    return undefined;
  return listed;
}
