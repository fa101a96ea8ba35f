export { type ActiveTracing, activeTracing } from "./active-tracing.ts";
export { type SamplerName, startTracing, type Tracing, type TracingOptions } from "./start-tracing.ts";
export { contextFromTraceParent, linksTo, logTraceFields, traceParentOf } from "./trace-parent.ts";
export { markFailed, type WithSpanOptions, withSpan } from "./with-span.ts";
