import type { RequestPriority } from "./request-gate.ts";
import { BrandsResource } from "./resources/brands.ts";
import { BusinessProfileResource } from "./resources/business-profile.ts";
import { ChannelsResource } from "./resources/channels.ts";
import { ConnectionResource } from "./resources/connection.ts";
import { EventsResource } from "./resources/events.ts";
import { JobsResource } from "./resources/jobs.ts";
import { LocationsResource } from "./resources/locations.ts";
import { MenusResource } from "./resources/menus.ts";
import { MerchantProfileResource } from "./resources/merchant.ts";
import { OrdersResource } from "./resources/orders.ts";
import { SandboxResource } from "./resources/sandbox.ts";
import type { Transport } from "./transport.ts";

/**
 * The API as seen by one merchant: every request carries `Service-Merchant-Id: <merchantId>`.
 * Made by `LoopsClient.forMerchant`; cheap, so make one per use if convenient.
 */
export class MerchantClient {
  readonly merchantId: string;
  readonly orders: OrdersResource;
  readonly events: EventsResource;
  readonly connection: ConnectionResource;
  readonly channels: ChannelsResource;
  readonly locations: LocationsResource;
  readonly merchant: MerchantProfileResource;
  readonly businessProfile: BusinessProfileResource;
  readonly brands: BrandsResource;
  readonly menus: MenusResource;
  readonly jobs: JobsResource;
  readonly sandbox: SandboxResource;

  constructor(transport: Transport, merchantId: string, priority: RequestPriority = "background") {
    this.merchantId = merchantId;
    this.orders = new OrdersResource(transport, merchantId, priority);
    this.events = new EventsResource(transport, merchantId, priority);
    this.connection = new ConnectionResource(transport, merchantId, priority);
    this.channels = new ChannelsResource(transport, merchantId, priority);
    this.locations = new LocationsResource(transport, merchantId, priority);
    this.merchant = new MerchantProfileResource(transport, merchantId, priority);
    this.businessProfile = new BusinessProfileResource(transport, merchantId, priority);
    this.brands = new BrandsResource(transport, merchantId, priority);
    this.menus = new MenusResource(transport, merchantId, priority);
    this.jobs = new JobsResource(transport, merchantId, priority);
    this.sandbox = new SandboxResource(transport, merchantId, priority);
  }
}
