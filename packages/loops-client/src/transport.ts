import type { z } from "zod";
import { classifyFetchError } from "./classify-fetch-error.ts";
import { LoopsError } from "./errors.ts";
import type { HttpFetch } from "./http.ts";
import { readProblem } from "./problem.ts";
import type { RequestGate, RequestPriority } from "./request-gate.ts";
import { requestSignal } from "./request-signal.ts";
import type { RequestStats } from "./request-stats.ts";
import { backoffDelayMs, type RetryPolicy, sleep } from "./retry-policy.ts";
import { parseReporting, type UnknownValueSink } from "./schemas/open-enum.ts";
/** Where a transport gets its bearer token: OAuth's TokenSource, or a fixed one (the gateway's). */
export interface BearerTokens {
  get(): Promise<string>;
  /** The token was refused (401): the next get() asks again where it can. */
  invalidate(token: string): void;
}

import { tracedFetch } from "./traced-fetch.ts";
import { formatIssuePath } from "./validation/format-issue-path.ts";

export type HttpMethod = "GET" | "POST" | "PUT" | "PATCH";

/** Anything with pino's warn/debug shape. */
export interface LoopsClientLogger {
  warn(obj: object, msg: string): void;
  debug?(obj: object, msg: string): void;
}

/** One logical API call; retries reuse it unchanged (same Idempotency-Key). */
export interface RequestSpec<S extends z.ZodType> {
  method: HttpMethod;
  /** The path template, e.g. `/orders/{order_id}`: used in stats, logs and errors (never IDs or secrets). */
  route: string;
  path: string;
  query?: Record<string, string | number | undefined>;
  json?: unknown;
  form?: FormData;
  merchantId?: string | undefined;
  idempotencyKey?: string | undefined;
  schema: S;
  signal?: AbortSignal | undefined;
  /** The share of the request budget it draws on. Default `background`. */
  priority?: RequestPriority | undefined;
  /**
   * Each call starts new work upstream though its method is not POST (PUT /brands/{id}/menu starts an
   * import job): like a POST without a key, it is never sent again after a timeout, network error or 5xx.
   * Default: false.
   */
  startsNewWork?: boolean | undefined;
}

export interface TransportOptions {
  apiUrl: string;
  tokens: BearerTokens;
  fetch: HttpFetch;
  timeoutMs: number;
  retry: RetryPolicy;
  userAgent: string;
  logger: LoopsClientLogger | undefined;
  stats: RequestStats;
  onUnknownValue: UnknownValueSink;
  /** Awaited before each attempt; told about 429s. Default: none (no budget). */
  gate?: RequestGate | undefined;
}

export const TOKEN_ROUTE = "{auth_url}";

/** Sends requests with auth, timeouts, retries and response validation; shared by every resource. */
export class Transport {
  readonly #o: TransportOptions;
  readonly #base: string;

  constructor(options: TransportOptions) {
    this.#o = options;
    this.#base = options.apiUrl.replace(/\/+$/, "");
  }

  async request<S extends z.ZodType>(spec: RequestSpec<S>): Promise<z.output<S>> {
    // POST without a key could create twice, so only a refusal (429) is retried for it; so could a call that
    // starts new work on each send.
    const idempotent = !spec.startsNewWork && (spec.method !== "POST" || spec.idempotencyKey !== undefined);
    let refreshed = false;
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.#attempt(spec, attempt);
      } catch (error) {
        if (spec.signal?.aborted) throw spec.signal.reason;
        this.#tellGate(error);
        if (
          error instanceof LoopsError &&
          error.status === 401 &&
          error.route !== TOKEN_ROUTE &&
          !refreshed
        ) {
          refreshed = true;
          attempt--;
          continue;
        }
        const delay = this.#retryDelay(error, attempt, idempotent);
        if (delay === undefined) throw error;
        this.#o.stats.recordRetry();
        this.#o.logger?.debug?.(
          {
            method: spec.method,
            route: spec.route,
            attempt,
            delayMs: delay,
            error: (error as Error).message,
          },
          "retrying Loops call",
        );
        await sleep(delay, spec.signal);
      }
    }
  }

  #retryDelay(error: unknown, attempt: number, idempotent: boolean): number | undefined {
    const { retry } = this.#o;
    if (attempt >= retry.maxAttempts) return undefined;
    if (!(error instanceof LoopsError)) return undefined;
    switch (error.kind) {
      case "rate_limited":
        if (error.retryAfter === undefined) return backoffDelayMs(attempt - 1, retry);
        return error.retryAfter > retry.maxRetryAfterSeconds ? undefined : error.retryAfter * 1000;
      case "unavailable":
      case "network":
      case "timeout":
        // 408 was never retried here: only 5xx among the answers (kept as it was).
        if (error.status === 408) return undefined;
        return idempotent || error.route === TOKEN_ROUTE ? backoffDelayMs(attempt - 1, retry) : undefined;
      default:
        return undefined;
    }
  }

  async #attempt<S extends z.ZodType>(spec: RequestSpec<S>, attempt: number): Promise<z.output<S>> {
    const { timeoutMs } = this.#o;
    let token: string;
    try {
      token = await this.#o.tokens.get();
    } catch (error) {
      throw classifyFetchError(error, "POST", TOKEN_ROUTE, timeoutMs);
    }
    const headers: Record<string, string> = {
      authorization: `Bearer ${token}`,
      accept: "application/json",
      "user-agent": this.#o.userAgent,
    };
    if (spec.merchantId !== undefined) headers["service-merchant-id"] = spec.merchantId;
    if (spec.idempotencyKey !== undefined) headers["idempotency-key"] = spec.idempotencyKey;
    let body: string | FormData | undefined;
    if (spec.form) body = spec.form;
    else if (spec.json !== undefined) {
      headers["content-type"] = "application/json";
      body = JSON.stringify(spec.json);
    }
    await this.#passGate(spec);
    const { signal, done } = requestSignal(spec.signal, timeoutMs);
    const started = performance.now();
    let status: number | undefined;
    try {
      const init = { method: spec.method, headers, body, signal };
      const response = await tracedFetch(this.#o.fetch, this.#url(spec), init, spec, attempt);
      status = response.status;
      if (!response.ok) {
        if (response.status === 401) this.#o.tokens.invalidate(token);
        throw await readProblem(response, { method: spec.method, route: spec.route });
      }
      const text = await response.text();
      return this.#parse(spec, text);
    } catch (error) {
      throw classifyFetchError(error, spec.method, spec.route, timeoutMs);
    } finally {
      done();
      this.#o.stats.recordRequest({
        method: spec.method,
        route: spec.route,
        merchantId: spec.merchantId,
        status,
        attempt,
        durationMs: performance.now() - started,
      });
    }
  }

  // The request budget's hook (LOOPS_MAX_RPS): waiting here is not part of the attempt's timeout.
  async #passGate(spec: RequestSpec<z.ZodType>): Promise<void> {
    const { gate } = this.#o;
    if (!gate) return;
    await gate.acquire({
      priority: spec.priority ?? "background",
      merchantId: spec.merchantId,
      signal: spec.signal,
    });
  }

  #tellGate(error: unknown): void {
    if (error instanceof LoopsError && error.kind === "rate_limited")
      this.#o.gate?.rateLimited?.(error.retryAfter);
  }

  #url(spec: RequestSpec<z.ZodType>): string {
    const url = new URL(this.#base + spec.path);
    for (const [key, value] of Object.entries(spec.query ?? {})) {
      if (value !== undefined) url.searchParams.set(key, String(value));
    }
    return url.href;
  }

  #parse<S extends z.ZodType>(spec: RequestSpec<S>, text: string): z.output<S> {
    let value: unknown;
    if (text.trim() !== "") {
      try {
        value = JSON.parse(text);
      } catch (cause) {
        throw LoopsError.badResponse(spec.method, spec.route, "", "not JSON", cause);
      }
    }
    const result = parseReporting(spec.schema, value, this.#o.onUnknownValue);
    if (!result.success) {
      const issue = result.error.issues[0];
      throw LoopsError.badResponse(
        spec.method,
        spec.route,
        issue ? formatIssuePath(issue.path) : "",
        issue?.message ?? "invalid",
      );
    }
    return result.data;
  }
}
