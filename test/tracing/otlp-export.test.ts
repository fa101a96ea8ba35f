// The official OTLP exporters, started as a service starts them, sending to a collector stand-in on
// loopback: both protocols arrive decodable, a Loops call is an HTTP client span after the semantic
// conventions (its traceparent sent upstream), a stored traceparent continues its trace, log lines name
// the span, and no credential reaches the collector.

import { Writable } from "node:stream";
import { createLogger } from "@loops-sync/config";
import { LoopsClient } from "@loops-sync/loops-client";
import {
  activeTracing,
  contextFromTraceParent,
  logTraceFields,
  startTracing,
  traceParentOf,
  withSpan,
} from "@loops-sync/tracing";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type OtlpCollector, startOtlpCollector } from "#testkit/otlp-collector";
import { orderBody } from "../support/api-bodies.ts";
import { json, type LoopsTestServer, problem, startLoopsTestServer } from "../support/loops-test-server.ts";

let collector: OtlpCollector;
let loops: LoopsTestServer;

beforeEach(async () => {
  collector = await startOtlpCollector();
  loops = await startLoopsTestServer();
});
afterEach(async () => {
  await loops.close();
  await collector.close();
});

const client = () =>
  new LoopsClient({
    apiUrl: loops.apiUrl,
    authUrl: loops.authUrl,
    clientId: loops.clientId,
    clientSecret: loops.clientSecret,
    retry: { baseDelayMs: 5, maxDelayMs: 20 },
  });

describe.each(["http/json", "http/protobuf"] as const)("tracing over OTLP %s", (protocol) => {
  it("exports a Loops call as an HTTP client span under its caller, with status and Retry-After", async () => {
    let calls = 0;
    loops.on("GET", "/orders/ord_1", (_req, res) => {
      calls++;
      if (calls === 1) problem(res, 429, "rate_limited", {}, { "retry-after": "0" });
      else json(res, 200, orderBody("ord_1"));
    });
    const tracing = await startTracing({
      endpoint: collector.url,
      protocol,
      serviceName: `svc-${protocol}`,
      serviceVersion: "0.1.0",
      resourceAttributes: { "deployment.environment.name": "test" },
    });
    let outerTraceParent = "";
    try {
      await withSpan("refresh order", { attributes: { "loops.order.id": "ord_1" } }, async (span) => {
        outerTraceParent = traceParentOf(span!);
        await client().forMerchant("mer_1").orders.get("ord_1");
      });
    } finally {
      await tracing.shutdown();
    }
    const type = protocol === "http/json" ? "application/json" : "application/x-protobuf";
    expect(collector.requests[type]).toBeGreaterThanOrEqual(1);

    const outer = collector.spans.find((s) => s.name === "refresh order")!;
    expect(outer.attributes["loops.order.id"]).toBe("ord_1");
    expect(outer.resource["service.name"]).toBe(`svc-${protocol}`);
    expect(outer.resource["deployment.environment.name"]).toBe("test");
    expect(`00-${outer.traceId}-${outer.spanId}-01`).toBe(outerTraceParent);

    const attempts = collector.spans.filter((s) => s.name === "GET /orders/{order_id}");
    expect(attempts).toHaveLength(2);
    const code = (status: number) =>
      attempts.find((s) => s.attributes["http.response.status_code"] === status)!;
    const limited = code(429);
    const ok = code(200);
    for (const span of attempts) {
      expect(span.kind).toBe(3); // client
      expect(span.traceId).toBe(outer.traceId);
      expect(span.parentSpanId).toBe(outer.spanId);
      expect(span.attributes["http.request.method"]).toBe("GET");
      expect(span.attributes["url.template"]).toBe("/orders/{order_id}");
      expect(span.attributes["url.full"]).toBe(`${loops.apiUrl}/orders/ord_1`);
      expect(span.attributes["loops.merchant.id"]).toBe("mer_1");
    }
    expect(ok.attributes["http.response.status_code"]).toBe(200);
    expect(limited.attributes["http.response.status_code"]).toBe(429);
    expect(limited.attributes["http.response.header.retry-after"]).toEqual(["0"]);
    expect(limited.attributes["error.type"]).toBe("429");
    expect(limited.statusCode).toBe(2);
    expect(ok.attributes["http.request.resend_count"]).toBe(1);

    // The token exchange the first attempt needed is a client span of the caller's too (form body unrecorded).
    const token = collector.spans.find((s) => s.name === "POST {auth_url}")!;
    expect(token).toMatchObject({ kind: 3, traceId: outer.traceId, parentSpanId: outer.spanId });
    expect(token.attributes["http.response.status_code"]).toBe(200);

    // Loops received each attempt's own span as its parent.
    const sent = loops.requests.map((r) => r.headers.traceparent);
    expect(sent.sort()).toEqual(attempts.map((s) => `00-${s.traceId}-${s.spanId}-01`).sort());

    // The bearer token, the client secret and the Authorization header never leave for the collector.
    const bearer = String(loops.requests[0]!.headers.authorization).replace(/^Bearer /, "");
    const exported = Buffer.concat(collector.bodies).toString("latin1");
    expect(bearer.length).toBeGreaterThan(8);
    for (const secret of [bearer, loops.clientSecret, "Bearer", "authorization", "client_secret"]) {
      expect(exported).not.toContain(secret);
    }
  });
});

describe("trace context", () => {
  it("continues a stored traceparent and names the active span in log lines", async () => {
    const tracing = await startTracing({
      endpoint: collector.url,
      protocol: "http/json",
      serviceName: "svc",
      serviceVersion: "0.1.0",
    });
    const lines: string[] = [];
    const destination = new Writable({
      write(chunk, _encoding, done) {
        lines.push(String(chunk));
        done();
      },
    });
    const logger = createLogger({ name: "t", destination, mixin: logTraceFields, pretty: false });
    const stored = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";
    try {
      await withSpan("apply order", { parent: contextFromTraceParent(stored) }, async () => {
        logger.info("inside");
      });
      logger.info("outside");
    } finally {
      await tracing.shutdown();
    }
    const apply = collector.spans.find((s) => s.name === "apply order")!;
    expect(apply.traceId).toBe("0af7651916cd43dd8448eb211c80319c");
    expect(apply.parentSpanId).toBe("b7ad6b7169203331");
    const [inside, outside] = lines.map((l) => JSON.parse(l));
    expect(inside).toMatchObject({ msg: "inside", trace_id: apply.traceId, span_id: apply.spanId });
    expect(outside.msg).toBe("outside");
    expect(outside.trace_id).toBeUndefined();
  });

  it("sends nothing and adds no header once tracing is off", async () => {
    loops.on("GET", "/orders/ord_2", (_req, res) => json(res, 200, orderBody("ord_2")));
    const tracing = await startTracing({
      endpoint: collector.url,
      protocol: "http/json",
      serviceName: "svc",
      serviceVersion: "0.1.0",
    });
    await tracing.shutdown();
    expect(activeTracing()).toBeUndefined();
    await withSpan("ignored", {}, async (span) => expect(span).toBeUndefined());
    await client().forMerchant("mer_1").orders.get("ord_2");
    expect(loops.requests[0]!.headers.traceparent).toBeUndefined();
    expect(collector.requests).toEqual({});
  });
});
