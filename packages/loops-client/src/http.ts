import { STATUS_CODES } from "node:http";
import { Agent } from "undici";

/** What the client reads of an HTTP answer: a subset of fetch's Response, which satisfies it. */
export interface HttpResponse {
  readonly ok: boolean;
  readonly status: number;
  readonly statusText: string;
  readonly headers: { get(name: string): string | null };
  text(): Promise<string>;
  json(): Promise<unknown>;
}

export interface HttpRequestInit {
  method: string;
  headers: Record<string, string>;
  body?: string | URLSearchParams | FormData | Uint8Array | undefined;
  signal: AbortSignal;
}

/** The client's way of sending one request; the global `fetch` is one. */
export type HttpFetch = (url: string, init: HttpRequestInit) => Promise<HttpResponse>;

/**
 * The default HttpFetch: undici's request API on a keep-alive pool of this client's own. The same
 * undici as the global fetch underneath, without the WHATWG Request/Response/stream objects, whose CPU per
 * call the worker would spend once per order event (docs/decisions.md). A multipart body (document
 * uploads) goes through fetch.
 */
export function createUndiciFetch(): HttpFetch {
  const agent = new Agent({ keepAliveTimeout: 30_000 });
  return async (url, { method, headers, body, signal }) => {
    if (body instanceof FormData) return await fetch(url, { method, headers, body, signal });
    const response = await agent.request({
      origin: new URL(url).origin,
      path: url.slice(url.indexOf("/", url.indexOf("//") + 2)) || "/",
      method: method as "GET",
      headers,
      body: body === undefined ? null : body instanceof Uint8Array ? body : String(body),
      signal,
    });
    // A timeout or the caller's abort while the body streams rejects with the signal's reason, as fetch does.
    const read = async () => {
      try {
        return await response.body.text();
      } catch (error) {
        throw signal.aborted ? signal.reason : error;
      }
    };
    const status = response.statusCode;
    return {
      ok: status >= 200 && status < 300,
      status,
      statusText: STATUS_CODES[status] ?? "",
      headers: {
        get(name) {
          const value = response.headers[name.toLowerCase()];
          return value === undefined ? null : Array.isArray(value) ? value.join(", ") : value;
        },
      },
      text: read,
      json: async () => JSON.parse(await read()) as unknown,
    };
  };
}
