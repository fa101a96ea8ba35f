// The webhook listener's /healthz and /readyz, its metrics (served by the admin listener), and the routes it
// does not serve, in-process (app.request) and over HTTP.
import { createReceiver, type RunningReceiver, startReceiver } from "@loops-sync/receiver";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "../support/db.ts";
import { deliver, makeEvent, SECRET } from "../support/webhook-fixtures.ts";

describe("health, readiness and metrics", () => {
  let db: TestDatabase;
  let empty: TestDatabase;
  let receiver: RunningReceiver;

  beforeAll(async () => {
    db = await createTestDatabase();
    empty = await createTestDatabase({ empty: true });
    receiver = await startReceiver({
      sql: db.sql,
      webhookSecrets: [SECRET],
      port: 0,
      host: "127.0.0.1",
    });
  });
  afterAll(async () => {
    await receiver?.close();
    await db?.drop();
    await empty?.drop();
  });

  it("is alive and ready on a migrated database", async () => {
    expect((await fetch(`${receiver.url}/healthz`)).status).toBe(200);
    const ready = await fetch(`${receiver.url}/readyz`);
    expect([ready.status, await ready.json()]).toEqual([200, { status: "ready" }]);
    expect((await fetch(`${receiver.url}/readyz`, { method: "POST" })).status).toBe(405);
  });

  it("is not ready while migrations are pending, nor once draining", async () => {
    const unmigrated = createReceiver({ sql: empty.sql, webhookSecrets: [SECRET] });
    const pending = await unmigrated.app.request("/readyz");
    expect(pending.status).toBe(503);
    const body = (await pending.json()) as { code: string; detail: string };
    expect(body.code).toBe("migrations_pending");
    expect(body.detail).toContain("0001_sync.sql");

    const draining = createReceiver({ sql: db.sql, webhookSecrets: [SECRET] });
    draining.drain();
    const response = await draining.app.request("/readyz");
    expect(response.status).toBe(503);
    expect(response.headers.get("connection")).toBe("close");
    expect(((await response.json()) as { code: string }).code).toBe("shutting_down");
  });

  it("counts received by type and outcome, duplicates, rejections by reason, latency and in-flight", async () => {
    const event = makeEvent({ type: "order.created" });
    await deliver(receiver.url, event);
    await deliver(receiver.url, event);
    const forged = "whsec_" + Buffer.from("definitely not the right secret!").toString("base64");
    await deliver(receiver.url, makeEvent(), { secrets: [forged] });
    const text = await receiver.registry.metrics();
    expect(text).toContain('loops_sync_webhooks_received_total{type="order.created",outcome="stored"} 1');
    expect(text).toContain('loops_sync_webhooks_received_total{type="order.created",outcome="duplicate"} 1');
    expect(text).toContain("loops_sync_webhooks_duplicates_total 1");
    expect(text).toContain('loops_sync_webhooks_rejected_total{reason="no_matching_signature"} 1');
    expect(text).toContain('loops_sync_webhook_ack_seconds_count{status="200"} 2');
    expect(text).toContain('loops_sync_webhook_ack_seconds_count{status="401"} 1');
    expect(text).toContain("loops_sync_webhook_requests_in_flight 0");
    expect(text).toContain("loops_sync_receiver_db_connections_max 4");
    expect(text).toContain("loops_sync_receiver_db_connections_in_use 0");
    expect(text).toMatch(/loops_sync_webhook_commit_batch_size_count \d+/);
    expect(text).not.toContain(SECRET.slice(6));
  });

  it("serves nothing but the webhook, /healthz and /readyz: no /metrics, no operator page", async () => {
    for (const path of ["/metrics", "/status", "/status/api", "/status/", "/admin"]) {
      const response = await fetch(`${receiver.url}${path}`);
      expect([path, response.status]).toEqual([path, 404]);
      expect(((await response.json()) as { code: string }).code).toBe("not_found");
    }
  });

  it("is neither alive nor ready while the process reports a problem", async () => {
    let problem: { code: string; detail: string } | undefined = {
      code: "worker_stopped",
      detail: "the job runner stopped",
    };
    const broken = createReceiver({ sql: db.sql, webhookSecrets: [SECRET], liveness: () => problem });
    for (const path of ["/healthz", "/readyz"]) {
      const response = await broken.app.request(path);
      expect(response.status).toBe(503);
      expect(((await response.json()) as { code: string }).code).toBe("worker_stopped");
    }
    problem = undefined;
    expect((await broken.app.request("/healthz")).status).toBe(200);
    expect((await broken.app.request("/readyz")).status).toBe(200);
  });

  it("in-process, a streamed body past the limit is cut off with 413", async () => {
    const small = createReceiver({ sql: db.sql, webhookSecrets: [SECRET], maxBodyBytes: 100 });
    const chunk = new TextEncoder().encode("x".repeat(60));
    let pulled = 0;
    const body = new ReadableStream<Uint8Array>({
      pull(controller) {
        pulled++;
        if (pulled > 1000) controller.close();
        else controller.enqueue(chunk);
      },
    });
    const response = await small.app.request("/webhooks/loops", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body,
      duplex: "half",
    } as RequestInit);
    expect(response.status).toBe(413);
    expect(pulled).toBeLessThan(10);
  });
});
