/** What the client reports about each HTTP request it sent (retries included, token requests not). */
export interface RequestInfo {
  method: string;
  /** Path template such as `/orders/{order_id}`. */
  route: string;
  merchantId: string | undefined;
  /** HTTP status, or undefined when no answer arrived (network error, timeout). */
  status: number | undefined;
  /** 1 for the first try of a call. */
  attempt: number;
  durationMs: number;
}

/** Counters since the client was made (or since `reset()`). */
export interface ClientStatsSnapshot {
  /** HTTP requests to the API, every attempt counted. */
  requests: number;
  /** Requests keyed by `"GET /orders/{order_id}"`. */
  byEndpoint: Record<string, number>;
  /** Token requests that reached the auth server. */
  tokenRequests: number;
  /** Attempts after the first (backoffs and Retry-After waits). */
  retries: number;
}

/** Counts requests by endpoint so callers can report API calls per event; also feeds `onRequest`. */
export class RequestStats {
  readonly #onRequest: ((info: RequestInfo) => void) | undefined;
  #requests = 0;
  #tokenRequests = 0;
  #retries = 0;
  #byEndpoint = new Map<string, number>();

  constructor(onRequest?: (info: RequestInfo) => void) {
    this.#onRequest = onRequest;
  }

  recordRequest(info: RequestInfo): void {
    this.#requests++;
    const key = `${info.method} ${info.route}`;
    this.#byEndpoint.set(key, (this.#byEndpoint.get(key) ?? 0) + 1);
    try {
      this.#onRequest?.(info);
    } catch {
      // A faulty metrics hook must not fail the API call it observes.
    }
  }

  recordTokenRequest(): void {
    this.#tokenRequests++;
  }

  recordRetry(): void {
    this.#retries++;
  }

  snapshot(): ClientStatsSnapshot {
    return {
      requests: this.#requests,
      byEndpoint: Object.fromEntries(this.#byEndpoint),
      tokenRequests: this.#tokenRequests,
      retries: this.#retries,
    };
  }

  reset(): void {
    this.#requests = 0;
    this.#tokenRequests = 0;
    this.#retries = 0;
    this.#byEndpoint.clear();
  }
}
