import type { HttpFetch, HttpResponse } from "./http.ts";
import type { RequestGate } from "./request-gate.ts";
import { requestSignal } from "./request-signal.ts";
import type { RequestStats } from "./request-stats.ts";
import type { TokenSource } from "./token-source.ts";
import { tracedFetch } from "./traced-fetch.ts";

/** A partner backend's write, passed on as it came (loops-sync's gateway): only the token is ours. */
export interface ForwardRequest {
  method: "POST" | "PUT" | "PATCH";
  /** The path after the base address's `/v1`, with its query string: `/locations/loc_1?dry=1`. */
  path: string;
  /** Its template, for stats and traces (never ids): `/locations/{location_id}`. */
  route: string;
  /** Passed on unchanged: content-type, idempotency-key, service-merchant-id. */
  headers: Record<string, string>;
  body?: Uint8Array | undefined;
  merchantId?: string | undefined;
  /** Longest wait for room in the request budget, in ms; none by then: nothing is sent. */
  budgetWaitMs: number;
}

/** What came of a forwarded call; nothing is retried but a 401 (our token, refreshed once). */
export type ForwardResult =
  /** Loops answered: its status, the headers a caller needs, the body as sent. */
  | { kind: "answered"; status: number; headers: Record<string, string>; body: string }
  /** The budget had no room within `budgetWaitMs`: nothing was sent. */
  | { kind: "no_budget" }
  /** Sent, no answer within the client's timeout: Loops may have applied it. */
  | { kind: "timeout" }
  /** The connection failed (refused, reset): it may or may not have arrived. */
  | { kind: "network" }
  /** loops-sync got no token of its own (credentials refused, auth server away): nothing was sent. */
  | { kind: "no_token" };

/** The headers of an answer a caller acts on; the rest are the transport's. */
export const ANSWER_HEADERS = [
  "content-type",
  "retry-after",
  "x-request-id",
  "request-id",
  "idempotent-replayed",
  "location",
] as const;

export interface ForwardDeps {
  base: string;
  tokens: TokenSource;
  fetch: HttpFetch;
  gate: RequestGate | undefined;
  timeoutMs: number;
  userAgent: string;
  stats: RequestStats;
}

function answerHeaders(response: HttpResponse): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const name of ANSWER_HEADERS) {
    const value = response.headers.get(name);
    if (value !== null) headers[name] = value;
  }
  return headers;
}

/**
 * Sends one write as live work of the request budget and returns Loops' answer as it came. A 401 means our
 * token went stale: it is refreshed and the call sent once more (a second budget token); anything else,
 * 429 and 5xx included, is the caller's to see, and a 429 narrows the shared budget as any other does.
 */
export async function forwardCall(deps: ForwardDeps, request: ForwardRequest): Promise<ForwardResult> {
  const deadline = performance.now() + request.budgetWaitMs;
  for (let attempt = 1; ; attempt++) {
    if (deps.gate) {
      const wait = AbortSignal.timeout(Math.max(0, Math.ceil(deadline - performance.now())));
      try {
        await deps.gate.acquire({ priority: "live", merchantId: request.merchantId, signal: wait });
      } catch {
        return { kind: "no_budget" };
      }
    }
    let token: string;
    try {
      token = await deps.tokens.get();
    } catch {
      return { kind: "no_token" };
    }
    const headers: Record<string, string> = {
      ...request.headers,
      authorization: `Bearer ${token}`,
      accept: "application/json",
      "user-agent": deps.userAgent,
    };
    const { signal, done } = requestSignal(undefined, deps.timeoutMs);
    const started = performance.now();
    let status: number | undefined;
    try {
      const init = { method: request.method, headers, body: request.body, signal };
      const response = await tracedFetch(deps.fetch, deps.base + request.path, init, request, attempt);
      status = response.status;
      const body = await response.text();
      if (status === 401 && attempt === 1) {
        deps.tokens.invalidate(token);
        continue;
      }
      if (status === 429) {
        const seconds = Number(response.headers.get("retry-after"));
        deps.gate?.rateLimited?.(Number.isFinite(seconds) && seconds > 0 ? seconds : undefined);
      }
      return { kind: "answered", status, headers: answerHeaders(response), body };
    } catch (error) {
      const name = (error as { name?: string }).name;
      return name === "TimeoutError" || signal.aborted ? { kind: "timeout" } : { kind: "network" };
    } finally {
      done();
      deps.stats.recordRequest({
        method: request.method,
        route: request.route,
        merchantId: request.merchantId,
        status,
        attempt,
        durationMs: performance.now() - started,
      });
    }
  }
}
