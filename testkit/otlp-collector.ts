// A stand-in for an OpenTelemetry collector: an OTLP/HTTP receiver on loopback that decodes what the
// official exporters send to /v1/traces, as http/json or http/protobuf, so tests can read the spans.

import { createServer, type IncomingMessage } from "node:http";
import type { AddressInfo } from "node:net";
import { decodeOtlpProtobuf } from "./decode-otlp-protobuf.ts";
import type { OtlpSpan } from "./otlp-span.ts";

export type { OtlpSpan };

export interface OtlpCollector {
  /** The base URL for OTEL_EXPORTER_OTLP_ENDPOINT. */
  url: string;
  spans: OtlpSpan[];
  /** Export requests received, by content type. */
  requests: Record<string, number>;
  /** The raw bodies received, to search for what must never be sent. */
  bodies: Buffer[];
  close(): Promise<void>;
}

type JsonValue = {
  stringValue?: string;
  boolValue?: boolean;
  intValue?: number | string;
  doubleValue?: number;
  arrayValue?: { values?: JsonValue[] };
};
type JsonKeyValue = { key: string; value?: JsonValue };

function jsonValue(v: JsonValue | undefined): unknown {
  if (!v) return undefined;
  if (v.stringValue !== undefined) return v.stringValue;
  if (v.boolValue !== undefined) return v.boolValue;
  if (v.intValue !== undefined) return Number(v.intValue);
  if (v.doubleValue !== undefined) return v.doubleValue;
  if (v.arrayValue) return (v.arrayValue.values ?? []).map(jsonValue);
  return undefined;
}

const jsonAttributes = (list: JsonKeyValue[] | undefined) =>
  Object.fromEntries((list ?? []).map((kv) => [kv.key, jsonValue(kv.value)]));

/** The spans of one OTLP JSON trace export (ids are hex strings in OTLP/JSON). */
export function decodeOtlpJson(body: Buffer): OtlpSpan[] {
  // biome-ignore lint/suspicious/noExplicitAny: the OTLP JSON document, read field by field below
  const request = JSON.parse(body.toString("utf8")) as any;
  const spans: OtlpSpan[] = [];
  for (const rs of request.resourceSpans ?? []) {
    const resource = jsonAttributes(rs.resource?.attributes);
    for (const ss of rs.scopeSpans ?? []) {
      for (const s of ss.spans ?? []) {
        spans.push({
          traceId: s.traceId,
          spanId: s.spanId,
          parentSpanId: s.parentSpanId ?? "",
          name: s.name,
          kind: s.kind ?? 0,
          attributes: jsonAttributes(s.attributes),
          links: (s.links ?? []).map((l: { traceId: string; spanId: string }) => ({
            traceId: l.traceId,
            spanId: l.spanId,
          })),
          statusCode: s.status?.code ?? 0,
          resource,
        });
      }
    }
  }
  return spans;
}

async function readAll(request: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

/** Starts the collector stand-in on 127.0.0.1 (a free port). */
export async function startOtlpCollector(): Promise<OtlpCollector> {
  const spans: OtlpSpan[] = [];
  const requests: Record<string, number> = {};
  const bodies: Buffer[] = [];
  const server = createServer(async (request, response) => {
    const body = await readAll(request);
    const type = (request.headers["content-type"] ?? "").split(";")[0]!.trim();
    if (request.method !== "POST" || request.url !== "/v1/traces") {
      response.writeHead(404).end();
      return;
    }
    requests[type] = (requests[type] ?? 0) + 1;
    bodies.push(body);
    try {
      if (type === "application/json") spans.push(...decodeOtlpJson(body));
      else if (type === "application/x-protobuf") spans.push(...decodeOtlpProtobuf(body));
      else {
        response.writeHead(415).end();
        return;
      }
    } catch {
      response.writeHead(400).end();
      return;
    }
    // An empty ExportTraceServiceResponse: full success.
    if (type === "application/json") response.writeHead(200, { "content-type": type }).end("{}");
    else response.writeHead(200, { "content-type": type }).end();
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    spans,
    requests,
    bodies,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
