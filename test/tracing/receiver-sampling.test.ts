// The receiver with tracing on, in process on real Postgres: a kept request continues the sender's
// traceparent and stores its own span with the event; a request the sampler leaves out is handled as with
// tracing off (no trace context stored, nothing exported).

import { startReceiver } from "@loops-sync/receiver";
import { type SamplerName, startTracing } from "@loops-sync/tracing";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { type OtlpCollector, startOtlpCollector } from "#testkit/otlp-collector";
import { createTestDatabase, type TestDatabase } from "../support/db.ts";
import { deliver, makeEvent, SECRET } from "../support/webhook-fixtures.ts";

let db: TestDatabase;
let collector: OtlpCollector;
beforeAll(async () => {
  db = await createTestDatabase();
});
afterAll(async () => {
  await db?.drop();
});
beforeEach(async () => {
  collector = await startOtlpCollector();
});
afterEach(async () => {
  await collector.close();
});

/** Starts tracing with `sampler` and a receiver, delivers `event`, then stops both (spans flushed). */
async function deliverTraced(
  sampler: SamplerName,
  event = makeEvent(),
  headers: Record<string, string> = {},
) {
  const tracing = await startTracing({
    endpoint: collector.url,
    protocol: "http/json",
    serviceName: "receiver-under-test",
    serviceVersion: "0.1.0",
    sampler,
  });
  const receiver = await startReceiver({ sql: db.sql, webhookSecrets: [SECRET], port: 0, host: "127.0.0.1" });
  try {
    const answer = await deliver(receiver.url, event, { headers });
    expect(answer.status).toBe(200);
  } finally {
    await receiver.close();
    await tracing.shutdown();
  }
  const [row] = await db.sql<{ trace_parent: string | null }[]>`
    select trace_parent from sync.events where id = ${event.id}`;
  return { event, traceParent: row!.trace_parent };
}

describe("the receiver's span and the stored trace context", () => {
  it("continues the sender's traceparent and stores its own span with the event", async () => {
    const sender = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
    const { event, traceParent } = await deliverTraced("parentbased_always_on", makeEvent(), {
      traceparent: sender,
    });
    const server = collector.spans.find((s) => s.kind === 2)!;
    expect(server).toMatchObject({
      name: "POST /webhooks/loops",
      traceId: "4bf92f3577b34da6a3ce929d0e0e4736",
      parentSpanId: "00f067aa0ba902b7",
    });
    expect(server.attributes).toMatchObject({ "loops.event.id": event.id, "http.response.status_code": 200 });
    expect(traceParent).toBe(`00-${server.traceId}-${server.spanId}-01`);
    const inbox = collector.spans.find((s) => s.name === "INSERT sync.events")!;
    expect(inbox).toMatchObject({ parentSpanId: server.spanId, kind: 3 });
    expect(inbox.attributes).toMatchObject({
      "db.system.name": "postgresql",
      "db.collection.name": "sync.events",
    });
    // The signature header and the secret stay out of the export.
    const exported = Buffer.concat(collector.bodies).toString("latin1");
    expect(exported).not.toContain("v1,");
    expect(exported).not.toContain(SECRET.slice(6));
  });

  it("handles a request the sampler leaves out as with tracing off", async () => {
    const { traceParent } = await deliverTraced("always_off");
    expect(traceParent).toBeNull();
    // Tracing was shut down (its exporter flushed) before this line: nothing more can arrive.
    expect(collector.spans).toEqual([]);
  });
});
