import { activeTracing, markFailed, traceParentOf } from "@loops-sync/tracing";
import type { Span } from "@opentelemetry/api";
import type { Context } from "hono";
import type { ReceiverEnv } from "./receiver-env.ts";

/** The route of the receiver's server span: the URL template, after the HTTP semantic conventions. */
export const WEBHOOK_ROUTE = "/webhooks/loops";

/** What a webhook request's handler tells its span once it knows the event (tracing on only). */
export interface RequestTrace {
  span: Span;
  /** The span's traceparent, stored with the event so the worker's spans continue this trace. */
  traceParent: string;
}

/**
 * Runs a webhook request in an HTTP server span `POST /webhooks/loops` (method, route, path, status; a
 * `traceparent` the sender passed is continued). The handler adds the event's id, type and merchant. No
 * header value nor body is recorded: the signature and the payload stay out of the trace. Call it only
 * while tracing is on. A request the sampler leaves out is handled as with tracing off.
 */
export async function traceWebhookRequest(
  c: Context<ReceiverEnv>,
  handle: (trace: RequestTrace | undefined) => Promise<Response>,
): Promise<Response> {
  const { api, tracer } = activeTracing()!;
  const incoming = c.env?.incoming?.headers;
  const traceparent =
    incoming !== undefined ? incoming.traceparent : (c.req.raw.headers.get("traceparent") ?? undefined);
  const parent = traceparent
    ? api.propagation.extract(api.ROOT_CONTEXT, { traceparent }, api.defaultTextMapGetter)
    : api.ROOT_CONTEXT;
  const path = c.req.path;
  const attributes = {
    "http.request.method": c.req.method,
    "http.route": WEBHOOK_ROUTE,
    "url.path": path,
    "url.scheme": "http",
  };
  const span = tracer.startSpan(
    `${c.req.method} ${WEBHOOK_ROUTE}`,
    { kind: api.SpanKind.SERVER, attributes },
    parent,
  );
  // Not sampled: nothing would be exported, so the request runs as with tracing off (no context, no
  // traceparent stored: the worker's spans for it follow the worker's own sampling).
  if (!span.isRecording()) {
    span.end();
    return handle(undefined);
  }
  try {
    const response = await api.context.with(api.trace.setSpan(parent, span), () =>
      handle({ span, traceParent: traceParentOf(span) }),
    );
    span.setAttribute("http.response.status_code", response.status);
    // Server spans are errors for 5xx only; a refused webhook (4xx) is the sender's problem.
    if (response.status >= 500) {
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
}
