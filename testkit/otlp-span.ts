/** One received span, the same whichever protocol carried it. Kinds are OTLP's: 1 internal, 2 server, 3 client. */
export interface OtlpSpan {
  traceId: string;
  spanId: string;
  /** "" for a root span. */
  parentSpanId: string;
  name: string;
  kind: number;
  attributes: Record<string, unknown>;
  links: { traceId: string; spanId: string }[];
  /** 0 unset, 1 ok, 2 error. */
  statusCode: number;
  /** The resource's attributes (`service.name`, …). */
  resource: Record<string, unknown>;
}
