/** Counters a test or benchmark reads to check what the sandbox saw and did. */
export interface SandboxStatsSnapshot {
  tokenRequests: number;
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
  apiCalls: {},
  apiFaults: { rate_limited: 0, server_error: 0, reset: 0, slow: 0, token_expired_early: 0 },
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

  get counters(): SandboxStatsSnapshot {
    return this.#s;
  }

  countApiCall(route: string): void {
    this.#s.apiCalls[route] = (this.#s.apiCalls[route] ?? 0) + 1;
  }

  snapshot(): SandboxStatsSnapshot {
    return structuredClone(this.#s);
  }

  reset(): void {
    this.#s = empty();
  }
}
