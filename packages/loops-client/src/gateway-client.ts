import { inspect } from "node:util";
import { z } from "zod";
import { createUndiciFetch, type HttpFetch } from "./http.ts";
import { MerchantClient } from "./merchant-client.ts";
import { RequestStats } from "./request-stats.ts";
import type { BrandsResource } from "./resources/brands.ts";
import type { BusinessProfileResource } from "./resources/business-profile.ts";
import type { LocationsResource } from "./resources/locations.ts";
import type { MenusResource } from "./resources/menus.ts";
import { type MerchantProfileResource, MerchantsResource } from "./resources/merchant.ts";
import type { SandboxResource } from "./resources/sandbox.ts";
import { type RetryOptions, resolveRetryPolicy } from "./retry-policy.ts";
import { Transport } from "./transport.ts";
import { merchantId as merchantIdRule } from "./validation/rules.ts";
import { validateInput } from "./validation/validate-input.ts";

export interface GatewayClientOptions {
  /** The loops-sync admin listener, e.g. `http://loops-sync:9091` (the client adds `/loops/v1`). */
  url: string;
  /** GATEWAY_TOKEN. Kept in a private field; never logged, inspected or serialised. */
  token: string;
  /** Per-request timeout. Default 15 000 ms (the gateway may wait GATEWAY_WAIT_MS for the budget first). */
  timeoutMs?: number;
  /** Retry schedule (429 after Retry-After; 5xx only where a retry cannot write twice). Default: the client's. */
  retry?: RetryOptions;
  /** Replaceable HTTP; the global `fetch` fits. Default: undici on a keep-alive pool of its own. */
  fetch?: HttpFetch;
}

/** The writes of one merchant (Service-Merchant-Id), typed as the Loops client types them. */
export interface GatewayMerchantClient {
  readonly merchantId: string;
  readonly merchant: Pick<MerchantProfileResource, "update">;
  readonly businessProfile: Pick<BusinessProfileResource, "put" | "uploadDocument" | "submit">;
  readonly brands: Pick<BrandsResource, "create" | "update">;
  readonly menus: Pick<MenusResource, "import" | "publish">;
  readonly locations: Pick<LocationsResource, "create" | "update">;
  /** POST /sandbox/orders: only when loops-sync runs against a sandbox. */
  readonly sandbox: Pick<SandboxResource, "createOrder">;
}

/** A partner backend's writes through loops-sync's gateway; reads are the mirror's (Postgres). */
export interface GatewayClient {
  /** POST /merchants (sent without Service-Merchant-Id). */
  readonly merchants: MerchantsResource;
  forMerchant(merchantId: string): GatewayMerchantClient;
}

const OptionsSchema = z.object({
  url: z.url({ protocol: /^https?$/, error: "expected the http(s) address of loops-sync's admin listener" }),
  token: z.string({ error: "expected GATEWAY_TOKEN" }).min(1, "expected GATEWAY_TOKEN"),
  timeoutMs: z.number().int().positive("expected a positive number of milliseconds"),
});

/**
 * The typed write methods of the Loops client, sent to loops-sync's gateway (`/loops/v1`) with GATEWAY_TOKEN:
 * loops-sync adds its own Loops token, counts the call in the application's budget and mirrors the answer
 * before it returns (docs/gateway.md). Errors are the Loops client's `LoopsError`, Loops' problems included.
 */
export function createGatewayClient({
  url,
  token,
  timeoutMs = 15_000,
  retry,
  fetch = createUndiciFetch(),
}: GatewayClientOptions): GatewayClient {
  validateInput(OptionsSchema, { url, token, timeoutMs });
  const secret = { get: () => Promise.resolve(token), invalidate: () => {} };
  const transport = new Transport({
    apiUrl: `${url.replace(/\/+$/, "")}/loops/v1`,
    tokens: secret,
    fetch,
    timeoutMs,
    retry: resolveRetryPolicy(retry),
    userAgent: "loops-sync-gateway-client/0.1",
    logger: undefined,
    stats: new RequestStats(),
    onUnknownValue: () => {},
  });
  const shown = `GatewayClient(${url})`;
  return {
    merchants: new MerchantsResource(transport),
    forMerchant(merchantId) {
      validateInput(merchantIdRule, merchantId, "merchantId");
      return new MerchantClient(transport, merchantId, "live");
    },
    toString: () => shown,
    toJSON: () => ({ url }),
    [inspect.custom]: () => shown,
  } as GatewayClient;
}
