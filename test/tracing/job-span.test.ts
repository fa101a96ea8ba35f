// The worker's jobs, traced, on real Postgres with a real receiver and the sandbox: each job run is a consumer
// span `process <task>` (job id, attempt, merchant); a webhook event that goes through process_events keeps
// its receiver's trace, and the jobs it leads to carry their own calls to Loops; a job that throws ends its
// span failed. Nothing secret reaches the collector.

import { startReceiver } from "@loops-sync/receiver";
import { startTracing, type Tracing } from "@loops-sync/tracing";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { type OtlpCollector, type OtlpSpan, startOtlpCollector } from "#testkit/otlp-collector";
import { waitFor } from "#testkit/wait-for";
import { deliver, makeEvent, SECRET } from "../support/webhook-fixtures.ts";
import { createHarness, type Harness } from "../support/worker-harness.ts";

const CONSUMER = 5; // OTLP's SPAN_KIND_CONSUMER

let harness: Harness;
let collector: OtlpCollector;
let tracing: Tracing;
beforeAll(async () => {
  harness = await createHarness();
});
afterAll(async () => {
  await harness?.close();
});
beforeEach(async () => {
  collector = await startOtlpCollector();
  tracing = await startTracing({
    endpoint: collector.url,
    protocol: "http/protobuf",
    serviceName: "loops-sync-test",
    serviceVersion: "0.1.0",
  });
});
afterEach(async () => {
  await tracing.shutdown();
  await collector.close();
});

const named = (name: string) => collector.spans.filter((s) => s.name === name);
const only = (name: string): OtlpSpan => {
  const spans = named(name);
  expect(spans, name).toHaveLength(1);
  return spans[0]!;
};

describe("a job run's span", () => {
  it("continues the receiver's trace through process_events, and each job names itself", async () => {
    const merchantId = harness.sandbox.merchantIds[0]!;
    // The worker first: it records its configured merchants as active, so the event is dispatched at once.
    const worker = await harness.worker();
    // No LOOPS_APPLICATION_ID at the receiver: every event goes through a process_events job.
    const receiver = await startReceiver({
      sql: harness.db.sql,
      webhookSecrets: [SECRET],
      port: 0,
      host: "127.0.0.1",
    });
    const event = makeEvent({ type: "location.updated", merchant_id: merchantId, data: {} });
    try {
      expect((await deliver(receiver.url, event)).status).toBe(200);
      // The location event is settled by the refresh_locations job that process_events added.
      await waitFor(
        async () =>
          (await harness.db.sql`select 1 from sync.events where id = ${event.id} and outcome <> 'pending'`)
            .length > 0,
        { what: "the location event settled by refresh_locations" },
      );
    } finally {
      await receiver.close();
      await worker.stop();
      await tracing.shutdown();
    }

    const server = only("POST /webhooks/loops");
    expect(server.attributes["loops.event.id"]).toBe(event.id);
    const processEvents = only("process process_events");
    expect(processEvents).toMatchObject({
      kind: CONSUMER,
      traceId: server.traceId,
      parentSpanId: server.spanId,
      statusCode: 0,
    });
    expect(processEvents.attributes).toMatchObject({
      "messaging.system": "graphile_worker",
      "messaging.operation.type": "process",
      "messaging.destination.name": "process_events",
      "messaging.message.id": expect.stringMatching(/^\d+$/),
      "loops.job.attempt": 1,
      "loops.event.ids": [event.id],
    });

    // A job added by another job starts a trace of its own, named after its task, with the payload's merchant;
    // the Loops calls it makes are its children.
    const locations = only("process refresh_locations");
    expect(locations.kind).toBe(CONSUMER);
    expect(locations.parentSpanId).toBe("");
    expect(locations.attributes).toMatchObject({
      "messaging.destination.name": "refresh_locations",
      "loops.merchant.id": merchantId,
      "loops.job.attempt": 1,
    });
    const list = named("GET /locations");
    expect(list.length).toBeGreaterThan(0);
    for (const call of list)
      expect(call).toMatchObject({ traceId: locations.traceId, parentSpanId: locations.spanId });

    const exported = Buffer.concat(collector.bodies).toString("latin1");
    for (const secret of [SECRET.slice(6), harness.sandbox.credentials.clientSecret, "Bearer"]) {
      expect(exported).not.toContain(secret);
    }
  });

  it("ends failed, with the error's type, when the job throws", async () => {
    const merchantId = harness.sandbox.merchantIds[0]!;
    const worker = await harness.worker();
    harness.sandbox.setFaults({ api5xxRate: 1 });
    try {
      const [job] = await harness.db.sql<{ id: string }[]>`
        select id::text from graphile_worker.add_job('refresh_merchant', json_build_object('merchantId', ${merchantId}::text),
                                                      max_attempts => 1)`;
      await waitFor(
        async () =>
          (
            await harness.db.sql`
              select 1 from graphile_worker._private_jobs
              where id = ${job!.id} and last_error is not null and locked_at is null`
          ).length > 0,
        { what: "the refresh_merchant job failed by the 503s" },
      );
      await worker.stop();
      await tracing.shutdown();
      const failed = only("process refresh_merchant");
      expect(failed).toMatchObject({ kind: CONSUMER, statusCode: 2 });
      expect(failed.attributes).toMatchObject({
        "messaging.message.id": job!.id,
        "loops.job.attempt": 1,
        "loops.job.max_attempts": 1,
        "loops.merchant.id": merchantId,
        "error.type": expect.any(String),
      });
    } finally {
      harness.sandbox.setFaults({ api5xxRate: 0 });
      await worker.stop();
    }
  });
});
