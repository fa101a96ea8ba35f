import type { Context, Link, Span } from "@opentelemetry/api";
import { activeTracing } from "./active-tracing.ts";

const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/;

/** A span's W3C `traceparent` (`00-<trace id>-<span id>-<flags>`), as stored with an event. */
export function traceParentOf(span: Span): string {
  const { traceId, spanId, traceFlags } = span.spanContext();
  return `00-${traceId}-${spanId}-${traceFlags.toString(16).padStart(2, "0")}`;
}

/**
 * A context whose (remote) parent is the stored `traceparent`, so spans started in it join that trace;
 * undefined when tracing is off or the value is not a version-00 traceparent.
 */
export function contextFromTraceParent(traceParent: string | null | undefined): Context | undefined {
  const tracing = activeTracing();
  const match = tracing && traceParent ? TRACEPARENT.exec(traceParent) : null;
  if (!tracing || !match) return undefined;
  const { api } = tracing;
  return api.trace.setSpanContext(api.ROOT_CONTEXT, {
    traceId: match[1]!,
    spanId: match[2]!,
    traceFlags: Number.parseInt(match[3]!, 16),
    isRemote: true,
  });
}

/** Links to the spans the stored traceparents name (the events a batch serves); invalid ones are skipped. */
export function linksTo(traceParents: Iterable<string | null | undefined>): Link[] {
  const tracing = activeTracing();
  if (!tracing) return [];
  const links: Link[] = [];
  for (const traceParent of traceParents) {
    const context = contextFromTraceParent(traceParent);
    const spanContext = context && tracing.api.trace.getSpanContext(context);
    if (spanContext) links.push({ context: spanContext });
  }
  return links;
}

/** `trace_id` and `span_id` of the active span, for log lines; empty when there is none or tracing is off. */
export function logTraceFields(): Record<string, string> {
  const span = activeTracing()?.api.trace.getActiveSpan();
  if (!span) return {};
  const { traceId, spanId } = span.spanContext();
  return { trace_id: traceId, span_id: spanId };
}
