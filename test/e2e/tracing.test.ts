// One order's way as one trace, across real processes: a receiver and a worker (`loops-sync receiver`,
// `loops-sync worker`) with the standard OTEL_* variables pointed at a collector stand-in, the sandbox
// delivering a signed webhook. The receiver's span names the event; the worker continues its trace from
// the traceparent stored with the event: the fetch is an HTTP client span for /orders/{order_id}, the apply
// names the order. Without OTEL_*, nothing is sent and nothing is stored.

import { randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type OtlpCollector, type OtlpSpan, startOtlpCollector } from "#testkit/otlp-collector";
import { receiverUrlOf } from "#testkit/processes";
import { waitFor } from "#testkit/wait-for";
import { workerWorld } from "../support/worker-world.ts";

const RUN_ID = `tracing-${randomBytes(4).toString("hex")}`;

/** A child's JSON log lines, as its log file holds them. */
const logLines = (file: string): Record<string, unknown>[] =>
  readFileSync(file, "utf8")
    .split("\n")
    .filter((l) => l.startsWith("{"))
    .map((l) => JSON.parse(l) as Record<string, unknown>);

describe("an order's way as one trace, receiver and worker processes", () => {
  const w = workerWorld(RUN_ID, "tracing");
  let collector: OtlpCollector;

  beforeAll(async () => {
    collector = await startOtlpCollector();
  });
  afterAll(async () => {
    await collector?.close();
  });

  /** Runs a receiver and a worker with `otel` set, delivers one new order, waits until it is applied. */
  async function deliverOrder(name: string, otel: (service: string) => Record<string, string>) {
    const [merchantId] = w.world.merchantIds;
    const env = w.env({ LOOPS_MERCHANT_IDS: merchantId! });
    const receiver = w.procs.spawn({
      name: `${RUN_ID}-${name}-receiver`,
      args: ["receiver"],
      env: { ...env, ...otel("receiver") },
    });
    const worker = w.procs.spawn({
      name: `${RUN_ID}-${name}-worker`,
      args: ["worker"],
      env: { ...env, ...otel("worker") },
    });
    const url = `${await receiverUrlOf(receiver)}/webhooks/loops`;
    w.sandbox.addWebhookEndpoint({ url, secrets: [w.world.webhookSecret] });
    await worker.waitForLine(/"msg":"worker started"/, 30_000);
    // The catch-up every worker runs as it starts is over: the order's event comes by webhook, not by it.
    await worker.waitForLine(/"msg":"catch-up run finished"/, 30_000);
    const order = w.sandbox.createOrder({ merchantId: merchantId! });
    const event = await waitFor(
      async () => {
        const [row] = await w.db.sql<{ id: string; outcome: string; trace_parent: string | null }[]>`
          select id, outcome, trace_parent from sync.events
          where order_id = ${order.id} and type = 'order.created'`;
        return row?.outcome === "applied" ? row : undefined;
      },
      { timeoutMs: 30_000, what: `the event of ${order.id} applied` },
    );
    // A clean stop flushes the spans still batched; after the exits nothing more can arrive.
    await Promise.all([receiver.kill("SIGTERM"), worker.kill("SIGTERM")]);
    return { order, event, logs: [receiver.logFile, worker.logFile] };
  }

  it("exports the receiver's span, the fetch and the apply in the receiver's trace", {
    timeout: 90_000,
  }, async () => {
    const { order, event, logs } = await deliverOrder("on", (service) => ({
      OTEL_EXPORTER_OTLP_ENDPOINT: collector.url,
      // One process per protocol: both reach the collector.
      OTEL_EXPORTER_OTLP_PROTOCOL: service === "receiver" ? "http/json" : "http/protobuf",
      OTEL_SERVICE_NAME: `shop-${service}`,
      OTEL_RESOURCE_ATTRIBUTES: "deployment.environment.name=e2e",
    }));
    expect(collector.requests["application/json"]).toBeGreaterThanOrEqual(1);
    expect(collector.requests["application/x-protobuf"]).toBeGreaterThanOrEqual(1);
    const spans = collector.spans;
    const one = (what: string, match: (s: OtlpSpan) => boolean) => {
      const found = spans.filter(match);
      expect(found, what).toHaveLength(1);
      return found[0]!;
    };

    // The stored traceparent names the receiver's span (of the delivery that stored it, if Loops sent twice).
    const received = one(
      "the receiver's span",
      (s) => `00-${s.traceId}-${s.spanId}-01` === event.trace_parent,
    );
    expect(received.attributes["loops.event.id"]).toBe(event.id);
    expect(received).toMatchObject({ name: "POST /webhooks/loops", kind: 2, parentSpanId: "" });
    expect(received.attributes).toMatchObject({
      "http.request.method": "POST",
      "http.route": "/webhooks/loops",
      "http.response.status_code": 200,
      "loops.event.type": "order.created",
    });
    expect(received.resource).toMatchObject({
      "service.name": "shop-receiver",
      "deployment.environment.name": "e2e",
    });
    const inbox = one(
      "the inbox commit",
      (s) => s.name === "INSERT sync.events" && s.parentSpanId === received.spanId,
    );
    expect(inbox.traceId).toBe(received.traceId);

    const refresh = one(
      "the worker's order span",
      (s) => s.name === "refresh order" && s.parentSpanId === received.spanId,
    );
    expect(refresh.traceId).toBe(received.traceId);
    expect(refresh.attributes["loops.order.id"]).toBe(order.id);
    expect(refresh.resource["service.name"]).toBe("shop-worker");

    // The answer (a retried attempt, under load, is a client span of its own beside it).
    const fetch = one(
      "the fetch",
      (s) =>
        s.parentSpanId === refresh.spanId &&
        s.kind === 3 &&
        s.attributes["http.response.status_code"] === 200,
    );
    expect(fetch.name).toBe("GET /orders/{order_id}");
    expect(fetch.traceId).toBe(received.traceId);
    expect(fetch.attributes).toMatchObject({
      "http.request.method": "GET",
      "url.template": "/orders/{order_id}",
      "http.response.status_code": 200,
      "loops.merchant.id": order.merchant_id,
    });
    expect(fetch.attributes["url.full"]).toMatch(new RegExp(`/orders/${order.id}$`));

    const apply = one("the apply", (s) => s.name === "apply order" && s.parentSpanId === refresh.spanId);
    expect(apply.traceId).toBe(received.traceId);
    expect(apply.attributes).toMatchObject({ "loops.order.id": order.id, "loops.order.changed": true });

    // The refresher's batch and claim are spans of the worker too; the order span links to its batch.
    const batch = one(
      "the batch",
      (s) => s.name === "refresh order batch" && refresh.links.some((l) => l.spanId === s.spanId),
    );
    expect(batch.attributes["loops.merchant.id"]).toBe(order.merchant_id);
    expect(spans.some((s) => s.name === "DELETE sync.order_refresh" && s.parentSpanId === batch.spanId)).toBe(
      true,
    );

    // Log lines written inside a span name it: the worker's catch-up lines lead to its exported spans.
    const traced = logLines(logs[1]!).filter((l) => l.trace_id !== undefined);
    expect(traced.length).toBeGreaterThan(0);
    for (const line of traced) {
      expect(spans.some((s) => s.traceId === line.trace_id && s.spanId === line.span_id)).toBe(true);
    }

    // No credential of any process in any exported byte.
    const exported = Buffer.concat(collector.bodies).toString("latin1");
    const { clientSecret } = w.world.credentials;
    const webhookKey = w.world.webhookSecret.replace(/^whsec_/, "");
    for (const secret of [clientSecret, webhookKey, w.db.url, "Bearer ", "webhook-signature"]) {
      expect(exported).not.toContain(secret);
    }
  });

  it("sends nothing and stores no trace context when OTEL_* is unset", { timeout: 90_000 }, async () => {
    const before = collector.bodies.length;
    const { event, logs } = await deliverOrder("off", () => ({}));
    expect(event.trace_parent).toBeNull();
    expect(logs.flatMap(logLines).filter((l) => "trace_id" in l)).toEqual([]);
    // Both processes have exited: whatever they would ever have sent has arrived by now.
    expect(collector.bodies.length).toBe(before);
  });

  it("traces a CLI verb that calls Loops, named after the verb by default", { timeout: 60_000 }, async () => {
    const before = collector.spans.length;
    const [merchantId] = w.world.merchantIds;
    const catchup = w.procs.spawn({
      name: `${RUN_ID}-catchup`,
      args: ["catchup", "--merchant", merchantId!, "--json"],
      env: { ...w.env(), OTEL_EXPORTER_OTLP_ENDPOINT: collector.url },
    });
    expect((await catchup.exited).code).toBe(0);
    const spans = collector.spans.slice(before);
    const merchant = spans.find((s) => s.name === "catch-up merchant")!;
    expect(merchant.attributes["loops.merchant.id"]).toBe(merchantId);
    expect(merchant.resource["service.name"]).toBe("loops-sync-catchup");
    const list = spans.find((s) => s.name === "GET /events")!;
    expect(list).toMatchObject({ kind: 3, traceId: merchant.traceId });
    expect(list.attributes["http.response.status_code"]).toBe(200);
  });
});
