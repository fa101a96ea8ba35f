import type { AddressInfo } from "node:net";
import { type ServerType, serve } from "@hono/node-server";
import { createSandboxApp } from "./app.ts";
import { SandboxClock } from "./clock.ts";
import { applySeed } from "./domain/apply-seed.ts";
import { EventLog } from "./domain/event-log.ts";
import { JobRunner } from "./domain/job-runner.ts";
import { ProfileReviewer } from "./domain/profile-review.ts";
import type { Order, OrderStatus, SandboxEvent } from "./domain/resources.ts";
import { defaultSeed, type SandboxSeed } from "./domain/seed.ts";
import { SandboxStore } from "./domain/store.ts";
import { type CreateOrderInput, type OrderPatch, SandboxWorld } from "./domain/world.ts";
import { FaultInjector, type Faults } from "./faults.ts";
import { type GeneratorOptions, OrderGenerator } from "./generator.ts";
import { IdempotencyStore } from "./http/idempotency.ts";
import { TokenStore } from "./http/tokens.ts";
import { IdFactory } from "./ids.ts";
import { createRandom } from "./random.ts";
import type { SandboxServices } from "./services.ts";
import { SandboxStats, type SandboxStatsSnapshot } from "./stats.ts";
import type { Delivery } from "./webhooks/delivery.ts";
import { WebhookDispatcher } from "./webhooks/dispatcher.ts";
import type { WebhookEndpoint, WebhookEndpointInput } from "./webhooks/endpoints.ts";

export interface SandboxOptions {
  /** Default: 0 (any free port). */
  port?: number;
  /** Default: "127.0.0.1". */
  host?: string;
  /** Merchants, applications and channels. Default: `defaultSeed()` (mer_demo_1, mer_demo_2). */
  seed?: SandboxSeed;
  /** Sandbox ms per real ms (3600: a real second is a sandbox hour). Default: 1. */
  timeScale?: number;
  /** Faults active from the start. Default: none. */
  faults?: Partial<Faults>;
  /** Seed of order contents and lifecycles. Default: 42. */
  randomSeed?: number;
  /** Webhook endpoints configured at start. Default: none. */
  webhooks?: WebhookEndpointInput[];
  /** Real ms an endpoint has to answer a webhook. Default: 10 000 (the spec's 10 s). */
  webhookReplyTimeoutMs?: number;
  /** Start the order generator at once with these settings. Default: not started. */
  generator?: GeneratorOptions;
  /** Sandbox ms a menu job spends pending, then running. Default: 1 000 each. */
  jobStepMs?: number;
  /** Sandbox ms from business-profile submit to the review decision. Default: 60 000. */
  reviewDelayMs?: number;
}

/** A running sandbox: its addresses, and controls mirroring the HTTP admin API under `${url}/admin`. */
export interface Sandbox {
  /** e.g. `http://127.0.0.1:41234`. */
  url: string;
  /** `${url}/v1`. */
  apiUrl: string;
  /** `${url}/oauth/token`. */
  authUrl: string;
  clock: SandboxClock;
  /** The first application of the seed (the demo credentials by default). */
  credentials: { clientId: string; clientSecret: string; applicationId: string };
  /** Seeded merchants, in seed order. */
  merchantIds: string[];
  createOrder(input: CreateOrderInput): Order;
  advanceOrder(orderId: string, toStatus?: OrderStatus): Order;
  updateOrder(orderId: string, patch: OrderPatch): Order;
  startGenerator(options: GeneratorOptions): void;
  stopGenerator(): void;
  addWebhookEndpoint(input: WebhookEndpointInput): WebhookEndpoint;
  updateWebhookEndpoint(
    id: string,
    patch: Partial<WebhookEndpointInput> & { enabled?: boolean },
  ): WebhookEndpoint;
  sendTestWebhook(endpointId: string): Delivery;
  deliveries(): Delivery[];
  /** Resolves when no delivery is in flight or waiting for its first attempt (later retries excluded). */
  flushDeliveries(): Promise<void>;
  setFaults(faults: Partial<Faults>): Faults;
  getFaults(): Faults;
  revokeMerchant(merchantId: string): void;
  /** The merchant connects again: a new active connection (new id) for each application it revoked. */
  reconnectMerchant(merchantId: string): void;
  /** Makes every issued access token invalid now. */
  expireTokens(): void;
  truth: {
    orders(merchantId?: string): Order[];
    order(id: string): Order | undefined;
    events(merchantId?: string): SandboxEvent[];
  };
  /** Counters; `apiCalls` is keyed like `GET /orders/{order_id}` (spec paths, without /v1). */
  stats(): SandboxStatsSnapshot;
  resetStats(): void;
  /** Stops the generator, timers, deliveries and the server. */
  close(): Promise<void>;
}

const SYSTEM = { type: "system", application_id: null } as const;

/** Starts a sandbox on loopback. */
export async function startSandbox({
  port = 0,
  host = "127.0.0.1",
  seed = defaultSeed(),
  timeScale = 1,
  faults: initialFaults = {},
  randomSeed = 42,
  webhooks = [],
  webhookReplyTimeoutMs,
  generator: generatorOptions,
  jobStepMs,
  reviewDelayMs,
}: SandboxOptions = {}): Promise<Sandbox> {
  const clock = new SandboxClock({ timeScale });
  const ids = new IdFactory(() => clock.now());
  const store = new SandboxStore();
  applySeed(store, seed, ids, clock.iso());
  const log = new EventLog(() => clock.now());
  const stats = new SandboxStats();
  const faults = new FaultInjector(initialFaults);
  const world = new SandboxWorld({ store, log, clock, ids, random: createRandom(randomSeed) });
  const defaultApplicationId = seed.applications[0]!.applicationId;
  const dispatcher = new WebhookDispatcher({
    clock,
    ids,
    faults,
    stats,
    defaultApplicationId,
    ...(webhookReplyTimeoutMs ? { replyTimeoutMs: webhookReplyTimeoutMs } : {}),
    envelopeFor(event, applicationId) {
      // A revocation is about one connection: only its application hears of it, under that connection's id
      // (a redelivery after a reconnect still names the old one).
      if (event.type === "connection.revoked") {
        const revoked = store.connections.get(event.connection_id);
        return revoked?.application_id === applicationId ? event : undefined;
      }
      const connection = store.connectionFor(applicationId, event.merchant_id);
      if (!connection) return undefined;
      // After revocation the application hears of the revocation itself, and nothing more.
      if (connection.status !== "active" && event.type !== "connection.revoked") return undefined;
      return connection.id === event.connection_id ? event : { ...event, connection_id: connection.id };
    },
  });
  world.onEvent((event) => {
    stats.counters.eventsEmitted++;
    dispatcher.enqueue(event);
  });
  const tokens = new TokenStore({ clock, ids, faults, stats });
  const generator = new OrderGenerator(world);
  const idempotency = new IdempotencyStore(clock);
  const services: SandboxServices = {
    idempotency,
    jobs: new JobRunner({ world, ...(jobStepMs !== undefined ? { stepMs: jobStepMs } : {}) }),
    reviewer: new ProfileReviewer({
      world,
      ...(reviewDelayMs !== undefined ? { delayMs: reviewDelayMs } : {}),
    }),
    store,
    log,
    clock,
    ids,
    world,
    faults,
    stats,
    dispatcher,
    tokens,
    generator,
  };
  for (const w of webhooks) dispatcher.endpoints.add(w);

  const app = createSandboxApp(services);
  const server = await new Promise<ServerType>((resolve, reject) => {
    const s = serve({ fetch: app.fetch, port, hostname: host }, () => resolve(s));
    s.once("error", reject);
  });
  const address = server.address() as AddressInfo;
  const shownHost = host.includes(":") ? `[${host}]` : host === "0.0.0.0" ? "127.0.0.1" : host;
  const url = `http://${shownHost}:${address.port}`;
  if (generatorOptions) generator.start(generatorOptions);

  return {
    url,
    apiUrl: `${url}/v1`,
    authUrl: `${url}/oauth/token`,
    clock,
    credentials: {
      clientId: seed.applications[0]!.clientId,
      clientSecret: seed.applications[0]!.clientSecret,
      applicationId: defaultApplicationId,
    },
    merchantIds: seed.merchants.map((m) => m.id),
    createOrder: (input) => world.createOrder(input, SYSTEM),
    advanceOrder: (orderId, toStatus) => world.advanceOrder(orderId, toStatus, SYSTEM),
    updateOrder: (orderId, patch) => world.updateOrder(orderId, patch, SYSTEM),
    startGenerator: (options) => generator.start(options),
    stopGenerator: () => generator.stop(),
    addWebhookEndpoint: (input) => dispatcher.endpoints.add(input),
    updateWebhookEndpoint: (id, patch) => dispatcher.endpoints.update(id, patch),
    sendTestWebhook: (endpointId) =>
      dispatcher.sendTest(endpointId, store.merchants.keys().next().value ?? "mer_unknown"),
    deliveries: () => dispatcher.deliveries(),
    flushDeliveries: () => dispatcher.flush(),
    setFaults: (f) => faults.set(f),
    getFaults: () => faults.get(),
    revokeMerchant: (merchantId) => world.revokeMerchant(merchantId),
    reconnectMerchant: (merchantId) => {
      world.reconnectMerchant(merchantId);
    },
    expireTokens: () => void tokens.expireAll(),
    truth: {
      orders: (merchantId) => store.ordersOf(merchantId).map((o) => structuredClone(o)),
      order: (id) => {
        const o = store.orders.get(id);
        return o ? structuredClone(o) : undefined;
      },
      events: (merchantId) => log.all(merchantId).map((e) => structuredClone(e)),
    },
    stats: () => stats.snapshot(),
    resetStats: () => stats.reset(),
    async close() {
      generator.stop();
      dispatcher.close();
      clock.close();
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        // Keep-alive sockets (webhook-free API clients) would hold close() open otherwise.
        if ("closeAllConnections" in server) server.closeAllConnections();
      });
    },
  };
}
