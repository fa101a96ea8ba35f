import type { Sampler } from "@opentelemetry/sdk-trace";
import { setActiveTracing } from "./active-tracing.ts";

/** The standard OTEL_* settings, as packages/config's env.ts parsed them. */
export interface TracingOptions {
  /** OTEL_EXPORTER_OTLP_ENDPOINT: the collector's base URL; spans go to `<endpoint>/v1/traces`. */
  endpoint: string;
  /** OTEL_EXPORTER_OTLP_PROTOCOL. Default: "http/protobuf". */
  protocol?: "http/protobuf" | "http/json";
  /** OTEL_SERVICE_NAME, else `service.name` of OTEL_RESOURCE_ATTRIBUTES, else this default. */
  serviceName: string;
  /** OTEL_TRACES_SAMPLER. Default: "parentbased_always_on". */
  sampler?: SamplerName;
  /** OTEL_TRACES_SAMPLER_ARG: the ratio of the *traceidratio samplers. Default: 1. */
  samplerArg?: number | undefined;
  /** OTEL_RESOURCE_ATTRIBUTES, parsed. Default: none. */
  resourceAttributes?: Record<string, string>;
  /** `service.version`. */
  serviceVersion: string;
}

export type SamplerName =
  | "always_on"
  | "always_off"
  | "traceidratio"
  | "parentbased_always_on"
  | "parentbased_always_off"
  | "parentbased_traceidratio";

/** Tracing as started: flush and stop it last, so the spans of the shutdown itself are sent. */
export interface Tracing {
  shutdown(): Promise<void>;
}

/**
 * Loads the OpenTelemetry SDK (dynamic imports: a process without OTEL_* never loads it), installs a
 * tracer provider that batches spans to the OTLP/HTTP collector, the AsyncLocalStorage context manager
 * and the W3C trace-context propagator. Call it before anything else starts, so every span has a tracer.
 */
export async function startTracing(options: TracingOptions): Promise<Tracing> {
  const [api, { AsyncLocalStorageContextManager }, { W3CTraceContextPropagator }, resources, sdk] =
    await Promise.all([
      import("@opentelemetry/api"),
      import("@opentelemetry/context-async-hooks"),
      import("@opentelemetry/core"),
      import("@opentelemetry/resources"),
      import("@opentelemetry/sdk-trace"),
    ]);
  const url = `${options.endpoint.replace(/\/+$/, "")}/v1/traces`;
  const { OTLPTraceExporter } =
    options.protocol === "http/json"
      ? await import("@opentelemetry/exporter-trace-otlp-http")
      : await import("@opentelemetry/exporter-trace-otlp-proto");
  const exporter = new OTLPTraceExporter({ url });
  const provider = new sdk.TracerProvider({
    sampler: buildSampler(sdk, options.sampler ?? "parentbased_always_on", options.samplerArg ?? 1),
    resource: resources.resourceFromAttributes({
      ...options.resourceAttributes,
      "service.name": options.serviceName,
      "service.version": options.serviceVersion,
    }),
    spanProcessors: [new sdk.BatchSpanProcessor({ exporter })],
  });
  const contextManager = new AsyncLocalStorageContextManager().enable();
  api.context.setGlobalContextManager(contextManager);
  api.trace.setGlobalTracerProvider(provider);
  api.propagation.setGlobalPropagator(new W3CTraceContextPropagator());
  setActiveTracing({ api, tracer: provider.getTracer("loops-sync", options.serviceVersion) });
  return {
    async shutdown() {
      setActiveTracing(undefined);
      await provider.shutdown();
      api.trace.disable();
      api.propagation.disable();
      api.context.disable();
    },
  };
}

function buildSampler(
  sdk: typeof import("@opentelemetry/sdk-trace"),
  name: SamplerName,
  ratio: number,
): Sampler {
  const root = name.endsWith("always_on")
    ? new sdk.AlwaysOnSampler()
    : name.endsWith("always_off")
      ? new sdk.AlwaysOffSampler()
      : new sdk.TraceIdRatioBasedSampler(ratio);
  return name.startsWith("parentbased_") ? new sdk.ParentBasedSampler({ root }) : root;
}
