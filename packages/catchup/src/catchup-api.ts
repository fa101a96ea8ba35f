import type {
  CallOptions,
  ClientStatsSnapshot,
  EventsListParams,
  EventsPage,
  Order,
  OrderPage,
  OrdersListParams,
} from "@loops-sync/loops-client";

/** The calls catch-up, backfill and verify make for one merchant (a `MerchantClient` satisfies it). */
export interface CatchupMerchantApi {
  events: { list(params?: EventsListParams, options?: CallOptions): Promise<EventsPage> };
  orders: {
    list(params?: OrdersListParams, options?: CallOptions): Promise<OrderPage>;
    get(orderId: string, options?: CallOptions): Promise<Order>;
  };
}

/**
 * What this package asks of `@loops-sync/loops-client`, written structurally so `LoopsClient` satisfies it.
 * `stats` (when present) is read before and after a run to report API calls per event.
 */
export interface CatchupApi {
  forMerchant(merchantId: string): CatchupMerchantApi;
  readonly stats?: ClientStatsSnapshot;
}

/** Requests the client sent so far (0 when it keeps no stats). */
export function requestCount(client: CatchupApi): number {
  return client.stats?.requests ?? 0;
}
