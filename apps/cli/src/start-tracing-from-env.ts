import { type Env, version } from "@loops-sync/config";
import type { Tracing } from "@loops-sync/tracing";

/**
 * Starts OpenTelemetry tracing when the standard variables ask for it (an OTLP endpoint set, the SDK not
 * disabled); otherwise loads nothing and returns undefined. `@loops-sync/tracing` is imported here only
 * then, so a process without OTEL_* never loads the SDK.
 */
export async function startTracingFromEnv(env: Env, verb: string): Promise<Tracing | undefined> {
  if (!env.OTEL_EXPORTER_OTLP_ENDPOINT || env.OTEL_SDK_DISABLED) return undefined;
  const { startTracing } = await import("@loops-sync/tracing");
  return await startTracing({
    endpoint: env.OTEL_EXPORTER_OTLP_ENDPOINT,
    protocol: env.OTEL_EXPORTER_OTLP_PROTOCOL,
    // The standard order: OTEL_SERVICE_NAME, then service.name among the resource attributes.
    serviceName:
      env.OTEL_SERVICE_NAME ?? env.OTEL_RESOURCE_ATTRIBUTES["service.name"] ?? `loops-sync-${verb}`,
    sampler: env.OTEL_TRACES_SAMPLER,
    samplerArg: env.OTEL_TRACES_SAMPLER_ARG,
    resourceAttributes: env.OTEL_RESOURCE_ATTRIBUTES,
    serviceVersion: version,
  });
}
