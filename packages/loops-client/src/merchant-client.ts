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

  constructor(transport: Transport, merchantId: string) {
    this.merchantId = merchantId;
    this.orders = new OrdersResource(transport, merchantId);
    this.events = new EventsResource(transport, merchantId);
    this.connection = new ConnectionResource(transport, merchantId);
    this.channels = new ChannelsResource(transport, merchantId);
    this.locations = new LocationsResource(transport, merchantId);
    this.merchant = new MerchantProfileResource(transport, merchantId);
    this.businessProfile = new BusinessProfileResource(transport, merchantId);
    this.brands = new BrandsResource(transport, merchantId);
    this.menus = new MenusResource(transport, merchantId);
    this.jobs = new JobsResource(transport, merchantId);
    this.sandbox = new SandboxResource(transport, merchantId);
  }
}
