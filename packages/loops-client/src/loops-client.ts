import { inspect } from "node:util";
import { z } from "zod";
import { classifyFetchError } from "./classify-fetch-error.ts";
import { type ForwardDeps, type ForwardRequest, type ForwardResult, forwardCall } from "./forward-call.ts";
import { createUndiciFetch, type HttpFetch } from "./http.ts";
import { MerchantClient } from "./merchant-client.ts";
import type { RequestGate, RequestPriority } from "./request-gate.ts";
import { type ClientStatsSnapshot, type RequestInfo, RequestStats } from "./request-stats.ts";
import { MerchantsResource } from "./resources/merchant.ts";
import { type RetryOptions, resolveRetryPolicy } from "./retry-policy.ts";
import { TokenSource } from "./token-source.ts";
import { type LoopsClientLogger, TOKEN_ROUTE, Transport } from "./transport.ts";
import { merchantId as merchantIdRule } from "./validation/rules.ts";
import { validateInput } from "./validation/validate-input.ts";

export interface LoopsClientOptions {
  /** Base address including `/v1` (LOOPS_API_URL). */
  apiUrl: string;
  /** OAuth token address (LOOPS_AUTH_URL). */
  authUrl: string;
  clientId: string;
  /** Kept in a private field; never logged, inspected, serialised or put in an error. */
  clientSecret: string;
  /** Per-request timeout, body included. Default 10 000 ms. */
  timeoutMs?: number;
  /** Retry schedule; see RetryOptions for each default. */
  retry?: RetryOptions;
  /**
   * Replaceable HTTP (tests, proxies); the global `fetch` fits. Default: undici's request API on a keep-alive
   * pool of this client's own (a third of fetch's CPU per call; see http.ts).
   */
  fetch?: HttpFetch;
  /** Receives retry notes (debug) and unknown enum values (warn, once each). Default: silent. */
  logger?: LoopsClientLogger;
  /** User-Agent header. Default `loops-sync-client/0.1`. */
  userAgent?: string;
  /** Called after every HTTP request to the API, retries included. Default: none. */
  onRequest?: (info: RequestInfo) => void;
  /**
   * Awaited before every attempt, the token request included (as `live`), and told about each 429: a
   * request budget shared with other processes (`SharedBudgetGate`). Default: none, nothing waits.
   */
  gate?: RequestGate;
}

/** Options of `forMerchant`. */
export interface MerchantClientOptions {
  /** `live` for order fetches a webhook is waiting on; everything else `background`. Default `background`. */
  priority?: RequestPriority;
}

const OptionsSchema = z.object({
  apiUrl: z.url({ protocol: /^https?$/, error: "expected an http(s) URL" }),
  authUrl: z.url({ protocol: /^https?$/, error: "expected an http(s) URL" }),
  clientId: z.string({ error: "expected a non-empty string" }).min(1, "expected a non-empty string"),
  clientSecret: z.string({ error: "expected a non-empty string" }).min(1, "expected a non-empty string"),
  timeoutMs: z.number().int().positive("expected a positive number of milliseconds"),
});

const MAX_REMEMBERED_UNKNOWN_VALUES = 1_000;

/**
 * Typed client of the Loops Partner API: one cached OAuth token per client, retries, timeouts and
 * validated responses. Per-merchant calls go through `forMerchant(id)`.
 */
export class LoopsClient {
  /** POST /merchants (sent without Service-Merchant-Id). */
  readonly merchants: MerchantsResource;
  readonly #transport: Transport;
  readonly #stats: RequestStats;
  readonly #apiUrl: string;
  readonly #clientId: string;
  readonly #tokens: TokenSource;
  readonly #timeoutMs: number;
  readonly #forward: ForwardDeps;

  constructor({
    apiUrl,
    authUrl,
    clientId,
    clientSecret,
    timeoutMs = 10_000,
    retry,
    fetch = createUndiciFetch(),
    logger,
    userAgent = "loops-sync-client/0.1",
    onRequest,
    gate,
  }: LoopsClientOptions) {
    validateInput(OptionsSchema, { apiUrl, authUrl, clientId, clientSecret, timeoutMs });
    const fetchImpl: HttpFetch = (url, init) => fetch(url, init);
    this.#apiUrl = apiUrl;
    this.#clientId = clientId;
    this.#stats = new RequestStats(onRequest);
    // The token request spends the budget too, ahead of background work: every call waits on it.
    const tokenFetch: HttpFetch = gate
      ? async (url, init) => {
          await gate.acquire({ priority: "live", merchantId: undefined });
          return fetch(url, init);
        }
      : fetchImpl;
    this.#tokens = new TokenSource({
      authUrl,
      clientId,
      clientSecret,
      fetch: tokenFetch,
      timeoutMs,
      userAgent,
      onTokenRequest: () => this.#stats.recordTokenRequest(),
    });
    this.#timeoutMs = timeoutMs;
    const seen = new Set<string>();
    this.#transport = new Transport({
      apiUrl,
      tokens: this.#tokens,
      fetch: fetchImpl,
      timeoutMs,
      retry: resolveRetryPolicy(retry),
      userAgent,
      logger,
      stats: this.#stats,
      gate,
      onUnknownValue: (field, value) => {
        const key = `${field}\u0000${value}`;
        if (seen.has(key) || seen.size >= MAX_REMEMBERED_UNKNOWN_VALUES) return;
        seen.add(key);
        logger?.warn({ field, value }, "Loops sent a value this client does not know; kept as-is");
      },
    });
    this.merchants = new MerchantsResource(this.#transport);
    this.#forward = {
      base: apiUrl.replace(/\/+$/, ""),
      tokens: this.#tokens,
      fetch: fetchImpl,
      gate,
      timeoutMs,
      userAgent,
      stats: this.#stats,
    };
  }

  /**
   * Sends a partner backend's write as it came, with this client's token, as live work of the request budget,
   * and returns Loops' answer unparsed (loops-sync's gateway). Not retried, but for a 401 after a token refresh.
   */
  forward(request: ForwardRequest): Promise<ForwardResult> {
    return forwardCall(this.#forward, request);
  }

  /** The API as one merchant: every call carries its Service-Merchant-Id. */
  forMerchant(merchantId: string, { priority = "background" }: MerchantClientOptions = {}): MerchantClient {
    validateInput(merchantIdRule, merchantId, "merchantId");
    return new MerchantClient(this.#transport, merchantId, priority);
  }

  /**
   * Makes sure the client credentials get a token (the cached one, or a new one: one call through the gate).
   * Rejects with the LoopsError of the token call, e.g. `refused` with status 401 for a wrong secret; it is
   * what every other call would fail with first, asked on its own (`loops-sync doctor`).
   */
  async authenticate(): Promise<void> {
    try {
      await this.#tokens.get();
    } catch (error) {
      throw classifyFetchError(error, "POST", TOKEN_ROUTE, this.#timeoutMs);
    }
  }

  /** Counters since creation or `resetStats()`: requests by endpoint, token requests, retries. */
  get stats(): ClientStatsSnapshot {
    return this.#stats.snapshot();
  }

  resetStats(): void {
    this.#stats.reset();
  }

  toString(): string {
    return `LoopsClient(${this.#apiUrl}, client ${this.#clientId})`;
  }

  toJSON(): object {
    return { apiUrl: this.#apiUrl, clientId: this.#clientId };
  }

  [inspect.custom](): string {
    return this.toString();
  }
}
