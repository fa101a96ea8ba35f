import { Counter, Histogram, type Registry } from "prom-client";

/**
 * What came of a gateway request, the `outcome` label: `mirrored` (2xx, applied to the mirror before the
 * answer), `not_mirrored` (2xx, nothing of it is mirrored, or the mirror's commit failed: the reconcile
 * brings it), `refused` (Loops' 4xx but 429), `rate_limited` (Loops' 429), `upstream_error` (Loops' 5xx),
 * `timeout`, `network`, `no_token`; and, with nothing sent: `no_budget`, `unauthorized`, `not_found`,
 * `not_allowed`, `too_large`.
 */
export type GatewayOutcome =
  | "mirrored"
  | "not_mirrored"
  | "refused"
  | "rate_limited"
  | "upstream_error"
  | "timeout"
  | "network"
  | "no_token"
  | "no_budget"
  | "unauthorized"
  | "not_found"
  | "not_allowed"
  | "too_large";

export interface GatewayMetrics {
  /** Requests by the spec's route template (`other` when none matched) and outcome. */
  writes: Counter<"route" | "outcome">;
  /** Calls the gateway sent to Loops, each a token of the shared request budget (LOOPS_MAX_RPS). */
  budgetCalls: Counter<"route">;
  /** From the request to the answer, by route: Loops' time, the budget's wait and the mirror's commit. */
  seconds: Histogram<"route">;
}

/** The gateway's Prometheus series; labels are route templates and outcomes, never ids or bodies. */
export function createGatewayMetrics(registry: Registry): GatewayMetrics {
  const registers = [registry];
  return {
    writes: new Counter({
      name: "loops_sync_gateway_writes_total",
      help: "Writes the partner's backend sent through the gateway, by route template and outcome",
      labelNames: ["route", "outcome"],
      registers,
    }),
    budgetCalls: new Counter({
      name: "loops_sync_gateway_budget_calls_total",
      help: "Calls the gateway sent to Loops, each taken from the shared request budget as live work",
      labelNames: ["route"],
      registers,
    }),
    seconds: new Histogram({
      name: "loops_sync_gateway_request_seconds",
      help: "Time from a gateway request to its answer: the budget's wait, Loops, and the mirror's commit",
      labelNames: ["route"],
      buckets: [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers,
    }),
  };
}
