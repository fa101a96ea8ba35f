import type * as Api from "@opentelemetry/api";

/** The OpenTelemetry API and our tracer, once startTracing has run; undefined while tracing is off. */
export interface ActiveTracing {
  api: typeof Api;
  tracer: Api.Tracer;
}

let active: ActiveTracing | undefined;

/**
 * Tracing as this process runs it: undefined when OTEL_* turned nothing on. Hot paths test this first, so
 * with tracing off they build no span, no closure and no context, and `@opentelemetry/api` is never loaded.
 */
export function activeTracing(): ActiveTracing | undefined {
  return active;
}

/** Installs (or, with undefined, removes) the process's tracing; startTracing and its shutdown call it. */
export function setActiveTracing(tracing: ActiveTracing | undefined): void {
  active = tracing;
}
