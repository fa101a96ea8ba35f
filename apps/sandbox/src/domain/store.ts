import type {
  Application,
  Brand,
  BusinessProfile,
  Channel,
  ChannelConnection,
  Connection,
  Job,
  Location,
  Menu,
  Merchant,
  Order,
} from "./resources.ts";

/** Everything the sandbox knows, in memory. Maps keep insertion order, which list endpoints rely on. */
export class SandboxStore {
  readonly applications = new Map<string, Application>();
  readonly merchants = new Map<string, Merchant>();
  readonly connections = new Map<string, Connection>();
  readonly brands = new Map<string, Brand>();
  readonly locations = new Map<string, Location>();
  readonly channelConnections = new Map<string, ChannelConnection>();
  readonly channels = new Map<string, Channel>();
  readonly orders = new Map<string, Order>();
  readonly jobs = new Map<string, Job>();
  readonly menus = new Map<string, Menu>();
  readonly profiles = new Map<string, BusinessProfile>();
  /** Bumped on every order change, so readers can cache derived views (the sorted order list). */
  orderRevision = 0;

  applicationByClientId(clientId: string): Application | undefined {
    for (const app of this.applications.values()) if (app.clientId === clientId) return app;
    return undefined;
  }

  /** The connection between an application and a merchant, whatever its status. */
  /** The application's newest connection to the merchant (a reconnect adds one after a revoked one). */
  connectionFor(applicationId: string, merchantId: string): Connection | undefined {
    let newest: Connection | undefined;
    for (const c of this.connections.values()) {
      if (c.application_id === applicationId && c.merchant_id === merchantId) newest = c;
    }
    return newest;
  }

  connectionsOf(applicationId: string): Connection[] {
    return [...this.connections.values()].filter((c) => c.application_id === applicationId);
  }

  /**
   * The connection events of a merchant are filed under: the first active one made (the platform app's;
   * after a reconnect, the new one), else the first one made.
   */
  primaryConnection(merchantId: string): Connection | undefined {
    let first: Connection | undefined;
    for (const c of this.connections.values()) {
      if (c.merchant_id !== merchantId) continue;
      if (c.status === "active") return c;
      first ??= c;
    }
    return first;
  }

  locationsOf(merchantId: string): Location[] {
    return [...this.locations.values()].filter((l) => l.merchant_id === merchantId);
  }

  brandsOf(merchantId: string): Brand[] {
    return [...this.brands.values()].filter((b) => b.merchant_id === merchantId);
  }

  channelConnectionsOf(locationId: string): ChannelConnection[] {
    return [...this.channelConnections.values()].filter((c) => c.location_id === locationId);
  }

  ordersOf(merchantId?: string): Order[] {
    const all = [...this.orders.values()];
    return merchantId ? all.filter((o) => o.merchant_id === merchantId) : all;
  }
}
