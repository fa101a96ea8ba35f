/** Counters a test or benchmark reads to check what the sandbox saw and did. */
export interface SandboxStatsSnapshot {
  tokenRequests: number;
  /**
   * The most requests (API and token together, faulted ones included) that arrived within any one second,
   * sliding: what an upstream's per-second quota would count.
   */
  busiestSecond: number;
  /** Calls per `METHOD /v1/path/{template}`, faulted calls included. */
  apiCalls: Record<string, number>;
  /** Faults injected into API calls, by kind. */
  apiFaults: {
    rate_limited: number;
    server_error: number;
    reset: number;
    slow: number;
    token_expired_early: number;
  };
  /** Slowed answers waiting now: a hang-up or the answer's time ends each wait. */
  slowAnswersWaiting: number;
  eventsEmitted: number;
  webhookAttempts: number;
  webhooksDelivered: number;
  webhooksDropped: number;
  webhooksDuplicated: number;
  webhooksFailed: number;
  webhookEndpointsDisabled: number;
}

const empty = (): SandboxStatsSnapshot => ({
  tokenRequests: 0,
  busiestSecond: 0,
  apiCalls: {},
  apiFaults: { rate_limited: 0, server_error: 0, reset: 0, slow: 0, token_expired_early: 0 },
  slowAnswersWaiting: 0,
  eventsEmitted: 0,
  webhookAttempts: 0,
  webhooksDelivered: 0,
  webhooksDropped: 0,
  webhooksDuplicated: 0,
  webhooksFailed: 0,
  webhookEndpointsDisabled: 0,
});

export class SandboxStats {
  #s = empty();
  // Arrival times of the last second (ms, monotonic), oldest first from #head.
  #arrivals: number[] = [];
  #head = 0;

  get counters(): SandboxStatsSnapshot {
    return this.#s;
  }

  countApiCall(route: string): void {
    this.#s.apiCalls[route] = (this.#s.apiCalls[route] ?? 0) + 1;
    this.countArrival();
  }

  countTokenRequest(): void {
    this.#s.tokenRequests++;
    this.countArrival();
  }

  /** One request arrived now: updates the busiest one-second window. */
  countArrival(now = performance.now()): void {
    this.#arrivals.push(now);
    while (this.#arrivals[this.#head]! <= now - 1000) this.#head++;
    this.#s.busiestSecond = Math.max(this.#s.busiestSecond, this.#arrivals.length - this.#head);
    if (this.#head > 4096) {
      this.#arrivals = this.#arrivals.slice(this.#head);
      this.#head = 0;
    }
  }

  snapshot(): SandboxStatsSnapshot {
    return structuredClone(this.#s);
  }

  reset(): void {
    this.#s = empty();
    this.#arrivals = [];
    this.#head = 0;
  }
}
