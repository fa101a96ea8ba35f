import { activeTracing, markFailed, traceParentOf } from "@loops-sync/tracing";
import type { HttpFetch, HttpRequestInit, HttpResponse } from "./http.ts";

/** What names a Loops call's span: the method, the route template and the merchant. */
export interface TracedCall {
  method: string;
  /** The URL template, e.g. `/orders/{order_id}`. */
  route: string;
  merchantId?: string | undefined;
}

/**
 * Sends one attempt of a Loops call through `fetch`; while tracing is on, inside an HTTP client span
 * `<METHOD> <route>` after the semantic conventions (method, `url.template`, `url.full` without its query,
 * server, resend count, status, `Retry-After`) whose `traceparent` goes to Loops with the request. Header
 * values (the bearer token) and bodies are never recorded. With tracing off it is `fetch` itself.
 */
export async function tracedFetch(
  fetch: HttpFetch,
  url: string,
  init: HttpRequestInit,
  call: TracedCall,
  attempt: number,
): Promise<HttpResponse> {
  const tracing = activeTracing();
  if (!tracing) return fetch(url, init);
  const { api, tracer } = tracing;
  const target = new URL(url);
  const attributes: Record<string, string | number> = {
    "http.request.method": call.method,
    "url.template": call.route,
    "url.full": `${target.origin}${target.pathname}`,
    "server.address": target.hostname,
    "server.port": Number(target.port || (target.protocol === "https:" ? 443 : 80)),
  };
  if (attempt > 1) attributes["http.request.resend_count"] = attempt - 1;
  if (call.merchantId !== undefined) attributes["loops.merchant.id"] = call.merchantId;
  const options = { kind: api.SpanKind.CLIENT, attributes };
  return tracer.startActiveSpan(`${call.method} ${call.route}`, options, async (span) => {
    try {
      const headers = { ...init.headers, traceparent: traceParentOf(span) };
      const response = await fetch(url, { ...init, headers });
      span.setAttribute("http.response.status_code", response.status);
      const retryAfter = response.headers.get("retry-after");
      if (retryAfter !== null) span.setAttribute("http.response.header.retry-after", [retryAfter]);
      if (response.status >= 400) {
        span.setAttribute("error.type", String(response.status));
        span.setStatus({ code: api.SpanStatusCode.ERROR });
      }
      return response;
    } catch (error) {
      markFailed(span, error);
      throw error;
    } finally {
      span.end();
    }
  });
}
