import { LoopsError } from "./errors.ts";
import type { HttpFetch } from "./http.ts";
import { readProblem } from "./problem.ts";
import { requestSignal } from "./request-signal.ts";
import { tracedFetch } from "./traced-fetch.ts";

/** The token exchange's client span: `POST {auth_url}` (the form body, with the secret, is never recorded). */
const TOKEN_CALL = { method: "POST", route: "{auth_url}" };

export interface TokenSourceOptions {
  authUrl: string;
  clientId: string;
  clientSecret: string;
  fetch: HttpFetch;
  timeoutMs: number;
  userAgent: string;
  /** Refresh this long before `expires_in` runs out. Default 60 s. */
  refreshMarginMs?: number;
  /** Called after every token request that reached the server (for counting). */
  onTokenRequest?: () => void;
  now?: () => number;
}

interface CachedToken {
  value: string;
  expiresAt: number;
}

/**
 * OAuth 2.0 client credentials, one cached token per client. Concurrent callers share one
 * in-flight request, so a burst after expiry costs one token call, not one per caller.
 * The secret lives in a private field: it is invisible to inspect, JSON and error messages.
 */
export class TokenSource {
  readonly #options: TokenSourceOptions;
  readonly #margin: number;
  readonly #now: () => number;
  #cached: CachedToken | undefined;
  #inflight: Promise<string> | undefined;

  constructor(options: TokenSourceOptions) {
    this.#options = options;
    this.#margin = options.refreshMarginMs ?? 60_000;
    this.#now = options.now ?? Date.now;
  }

  /** A valid access token, fetching one when none is cached or it is near expiry. */
  get(): Promise<string> {
    const cached = this.#cached;
    if (cached && this.#now() < cached.expiresAt - this.#margin) return Promise.resolve(cached.value);
    if (!this.#inflight) {
      this.#inflight = this.#request().finally(() => {
        this.#inflight = undefined;
      });
    }
    return this.#inflight;
  }

  /** Forget `token` after the API refused it; a newer token fetched meanwhile is kept. */
  invalidate(token: string): void {
    if (this.#cached?.value === token) this.#cached = undefined;
  }

  async #request(): Promise<string> {
    const { authUrl, clientId, clientSecret, timeoutMs, userAgent } = this.#options;
    const body = new URLSearchParams({
      grant_type: "client_credentials",
      client_id: clientId,
      client_secret: clientSecret,
    });
    const { signal, done } = requestSignal(undefined, timeoutMs);
    try {
      return await this.#exchange(authUrl, body, userAgent, signal);
    } finally {
      done();
    }
  }

  async #exchange(authUrl: string, body: URLSearchParams, userAgent: string, signal: AbortSignal) {
    const init = {
      method: "POST",
      headers: {
        "content-type": "application/x-www-form-urlencoded",
        accept: "application/json",
        "user-agent": userAgent,
      },
      body,
      signal,
    };
    const response = await tracedFetch(this.#options.fetch, authUrl, init, TOKEN_CALL, 1);
    this.#options.onTokenRequest?.();
    if (!response.ok) {
      throw await readProblem(response, {
        method: "POST",
        route: "{auth_url}",
        fallbackCode: tokenFailureCode(response.status),
      });
    }
    const json: unknown = await response.json().catch(() => undefined);
    const token = readTokenBody(json);
    if (!token) {
      throw LoopsError.fromAnswer({
        status: response.status,
        code: "unauthorized",
        title: "Token response without access_token/expires_in",
        method: "POST",
        route: "{auth_url}",
      });
    }
    this.#cached = { value: token.accessToken, expiresAt: this.#now() + token.expiresIn * 1000 };
    return token.accessToken;
  }

  toJSON(): object {
    return { authUrl: this.#options.authUrl, clientId: this.#options.clientId };
  }
}

function tokenFailureCode(status: number): string {
  if (status === 429) return "rate_limited";
  if (status >= 500) return "upstream_unavailable";
  return "unauthorized";
}

function readTokenBody(json: unknown): { accessToken: string; expiresIn: number } | undefined {
  if (!json || typeof json !== "object") return undefined;
  const { access_token, expires_in } = json as Record<string, unknown>;
  if (typeof access_token !== "string" || access_token === "") return undefined;
  // A missing lifetime is treated as the spec's 15 minutes rather than as "never expires".
  const expiresIn = typeof expires_in === "number" && expires_in > 0 ? expires_in : 900;
  return { accessToken: access_token, expiresIn };
}
