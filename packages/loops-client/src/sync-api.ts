import type { MerchantClientOptions } from "./loops-client.ts";
import type { ClientStatsSnapshot } from "./request-stats.ts";
import type { BrandsResource } from "./resources/brands.ts";
import type { ChannelsResource } from "./resources/channels.ts";
import type { ConnectionResource } from "./resources/connection.ts";
import type { EventsResource } from "./resources/events.ts";
import type { JobsResource } from "./resources/jobs.ts";
import type { LocationsResource } from "./resources/locations.ts";
import type { MenusResource } from "./resources/menus.ts";
import type { MerchantProfileResource } from "./resources/merchant.ts";
import type { OrdersResource } from "./resources/orders.ts";

/**
 * The calls the sync (the worker's jobs, catch-up, backfill, verify and reconcile) makes for one merchant:
 * a subset of `MerchantClient`, written as one interface so both sides and their wrappers share it.
 */
export interface SyncMerchantApi {
  events: Pick<EventsResource, "list">;
  orders: Pick<OrdersResource, "get" | "list">;
  merchant: Pick<MerchantProfileResource, "get">;
  connection: Pick<ConnectionResource, "get">;
  locations: Pick<LocationsResource, "list" | "channelConnections">;
  channels: Pick<ChannelsResource, "list">;
  jobs: Pick<JobsResource, "get">;
  brands: Pick<BrandsResource, "list" | "get">;
  menus: Pick<MenusResource, "get">;
}

/** What the sync asks of the client; `LoopsClient` satisfies it. */
export interface SyncApi {
  /**
   * A view that sends Service-Merchant-Id on every call. `live` calls go first within the shared request
   * budget (LOOPS_MAX_RPS); the default is background.
   */
  forMerchant(merchantId: string, options?: MerchantClientOptions): SyncMerchantApi;
  /** Requests so far, read before and after a run to report API calls per event; absent when not kept. */
  readonly stats?: ClientStatsSnapshot;
}
