import type { Attributes, Context, Link, Span } from "@opentelemetry/api";
import { activeTracing } from "./active-tracing.ts";

export interface WithSpanOptions {
  /** The span's kind, after the semantic conventions. Default: "internal". */
  kind?: "internal" | "server" | "client" | "producer" | "consumer";
  attributes?: Attributes;
  links?: Link[];
  /** The parent; default: the active context (the caller's span, if any). */
  parent?: Context | undefined;
}

/** @opentelemetry/api's SpanKind values, by name (the enum itself is only loaded with the SDK). */
const SPAN_KINDS = { internal: 0, server: 1, client: 2, producer: 3, consumer: 4 } as const;

/**
 * Runs `fn` inside a new active span (its children and log lines see it) and ends the span when `fn`
 * settles; a thrown error marks it failed with the error's name, never its message (messages may quote
 * data). With tracing off, runs `fn(undefined)` and nothing else.
 */
export async function withSpan<T>(
  name: string,
  options: WithSpanOptions,
  fn: (span: Span | undefined) => Promise<T>,
): Promise<T> {
  const tracing = activeTracing();
  if (!tracing) return fn(undefined);
  const { api, tracer } = tracing;
  const { parent, kind = "internal", attributes, links } = options;
  const spanOptions = { kind: SPAN_KINDS[kind], attributes, links };
  return tracer.startActiveSpan(name, spanOptions, parent ?? api.context.active(), async (span) => {
    try {
      return await fn(span);
    } catch (error) {
      markFailed(span, error);
      throw error;
    } finally {
      span.end();
    }
  });
}

/** Marks a span failed, by the error's type only (`error.type`): a message may carry payload or secrets. */
export function markFailed(span: Span, error: unknown): void {
  const tracing = activeTracing();
  const type =
    (error as { code?: unknown })?.code && typeof (error as { code?: unknown }).code === "string"
      ? String((error as { code: string }).code)
      : error instanceof Error
        ? error.name
        : "_OTHER";
  span.setAttribute("error.type", type);
  if (tracing) span.setStatus({ code: tracing.api.SpanStatusCode.ERROR });
}
