// What the hostile-input run found, each case over real HTTP on real Postgres: signed events Postgres can
// never store get 4xx (not 503), Node's own refusals are problem+json, sender-chosen event types cannot grow
// the metric series, and 503 bodies say "retry later" without the driver's error.

import { randomBytes } from "node:crypto";
import { createServer, connect as netConnect } from "node:net";
import { connect } from "@loops-sync/db";
import { type RunningReceiver, startReceiver } from "@loops-sync/receiver";
import { createWorkerMetrics } from "@loops-sync/worker";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "../support/db.ts";
import { deliver, makeEvent, SECRET } from "../support/webhook-fixtures.ts";

/** Sends raw bytes and resolves with everything the server answers before it closes the connection. */
function rawExchange(url: string, request: string): Promise<string> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = netConnect(Number(port), hostname);
    const chunks: Buffer[] = [];
    socket.on("data", (chunk) => chunks.push(chunk));
    socket.on("error", (error) =>
      chunks.length > 0 ? resolve(Buffer.concat(chunks).toString()) : reject(error),
    );
    socket.on("close", () => resolve(Buffer.concat(chunks).toString()));
    socket.write(request);
  });
}

/** The status and JSON body of a raw HTTP/1.1 answer. */
function parseRaw(raw: string): {
  status: number;
  contentType: string | undefined;
  json: Record<string, unknown>;
} {
  const [head = "", body = ""] = raw.split("\r\n\r\n");
  const status = Number(head.split(" ")[1]);
  const contentType = /^content-type: *(.*)$/im.exec(head)?.[1]?.trim();
  let json: Record<string, unknown> = {};
  try {
    json = JSON.parse(body) as Record<string, unknown>;
  } catch {}
  return { status, contentType, json };
}

describe("the receiver refuses hostile input with a clear answer", () => {
  let db: TestDatabase;
  let receiver: RunningReceiver;

  beforeAll(async () => {
    db = await createTestDatabase();
    receiver = await startReceiver({ sql: db.sql, webhookSecrets: [SECRET], port: 0, host: "127.0.0.1" });
  });
  afterAll(async () => {
    await receiver?.close();
    await db?.drop();
  });

  const stored = async (id: string) =>
    (await db.sql<{ n: number }[]>`select count(*)::int as n from sync.events where id = ${id}`)[0]!.n;

  it("a 100,000-level nested array (200 KB) gets 422 unstorable_event, not 503", async () => {
    const event = makeEvent();
    const text = JSON.stringify({ ...event, data: { ...event.data, deep: "@" } }).replace(
      '"@"',
      "[".repeat(100_000) + "]".repeat(100_000),
    );
    expect(text.length).toBeGreaterThan(200_000);
    const result = await deliver(receiver.url, text, { id: event.id });
    expect([result.status, result.json["code"]]).toEqual([422, "unstorable_event"]);
    expect(result.json["detail"]).toMatch(/deeper than 64 levels/);
    expect(await stored(event.id)).toBe(0);
  });

  it("a 6,404-character event id gets 422 unstorable_event, not 503; 255 characters are stored", async () => {
    const event = makeEvent();
    // Random characters: Postgres compresses a repetitive one until it fits an index row.
    event.id = `evt_${randomBytes(3200).toString("hex")}`;
    const result = await deliver(receiver.url, event);
    expect([result.status, result.json["code"]]).toEqual([422, "unstorable_event"]);
    expect(result.json["detail"]).toMatch(/^id is longer than 255 characters/);
    expect(await stored(event.id)).toBe(0);
    // The bound is on length only: an unknown prefix at the bound is stored.
    const within = makeEvent({ merchant_id: `mrc2_${"m".repeat(250)}`, connection_id: "cx_1" });
    within.id = `ev2_${"e".repeat(251)}`;
    expect((await deliver(receiver.url, within)).status).toBe(200);
    expect(await stored(within.id)).toBe(1);
  });

  it("a 64 KB webhook-signature header gets a problem+json 431, not a bare 431 and a reset", async () => {
    const raw = await rawExchange(
      receiver.url,
      "POST /webhooks/loops HTTP/1.1\r\nhost: localhost\r\ncontent-type: application/json\r\n" +
        `webhook-id: evt_1\r\nwebhook-timestamp: 1\r\nwebhook-signature: v1,${"A".repeat(65_536)}\r\n` +
        "content-length: 2\r\n\r\n{}",
    );
    const answer = parseRaw(raw);
    expect(answer.status).toBe(431);
    expect(answer.contentType).toBe("application/problem+json");
    expect(answer.json).toMatchObject({ status: 431, code: "headers_too_large" });
  });

  it("malformed HTTP gets a problem+json 400", async () => {
    const answer = parseRaw(
      await rawExchange(receiver.url, "POST /webhooks/loops HTTP/1.1\r\nbad header\r\n\r\n"),
    );
    expect(answer.status).toBe(400);
    expect(answer.contentType).toBe("application/problem+json");
    expect(answer.json).toMatchObject({ status: 400, code: "malformed_request" });
  });

  it("60 distinct event types make a bounded set of type label values", async () => {
    const types = Array.from({ length: 60 }, (_, i) => `custom_${i}.happened`);
    for (const type of types) expect((await deliver(receiver.url, makeEvent({ type }))).status).toBe(200);
    await deliver(receiver.url, makeEvent({ type: "order.status_changed" }));
    // What the process's admin listener serves at /metrics (the webhook port serves none).
    const text = await receiver.registry.metrics();
    const values = new Set(
      [...text.matchAll(/^loops_sync_webhooks_received_total\{[^}]*type="([^"]*)"/gm)].map((m) => m[1]),
    );
    expect(values.size).toBeLessThanOrEqual(5 + 20 + 1);
    expect(values).toContain("other");
    expect(values).toContain("order.status_changed");
    expect(
      /^loops_sync_webhooks_received_total\{type="other",outcome="stored"\} (\d+)$/m.exec(text)?.[1],
    ).toBe(String(60 - 20));
  });
});

describe("worker metric labels", () => {
  it("values outside the known sets, past a small cap, are counted as other", async () => {
    const metrics = createWorkerMetrics();
    for (let i = 0; i < 60; i++) {
      metrics.events.inc({ outcome: `from_a_row_${i}` });
      metrics.upstreamFailures.inc({ kind: `kind_${i}` });
      metrics.jobs.inc({ task: `task_${i}`, result: "success" });
    }
    metrics.events.inc({ outcome: "applied" }, 3);
    const text = await metrics.registry.metrics();
    for (const [name, label] of [
      ["loops_sync_worker_events_total", "outcome"],
      ["loops_sync_worker_upstream_failures_total", "kind"],
      ["loops_sync_worker_jobs_total", "task"],
    ] as const) {
      const values = new Set(
        [...text.matchAll(new RegExp(`^${name}\\{[^}]*${label}="([^"]*)"`, "gm"))].map((m) => m[1]),
      );
      expect(values.size, name).toBeLessThanOrEqual(11 + 1);
      expect(values, name).toContain("other");
    }
    expect(text).toMatch(/^loops_sync_worker_events_total\{outcome="applied"\} 3$/m);
  });
});

describe("Postgres unreachable", () => {
  it("the 503s (webhook and /readyz) say retry later, without the driver's error", async () => {
    const port = await new Promise<number>((resolve) => {
      const server = createServer().listen(0, "127.0.0.1", () => {
        const { port: p } = server.address() as { port: number };
        server.close(() => resolve(p));
      });
    });
    const sql = connect(`postgres://postgres@127.0.0.1:${port}/nowhere`, { max: 2 });
    const down = await startReceiver({ sql, webhookSecrets: [SECRET], port: 0, host: "127.0.0.1" });
    try {
      const result = await deliver(down.url, makeEvent());
      expect([result.status, result.json["code"]]).toEqual([503, "database_unavailable"]);
      expect(result.headers.get("retry-after")).toBe("5");
      expect(result.json["detail"]).toMatch(/retry later/);
      expect(JSON.stringify(result.json)).not.toMatch(/ECONN|ENOTFOUND|127\.0\.0\.1|postgres|\(/i);
      const ready = await fetch(`${down.url}/readyz`);
      const body = (await ready.json()) as Record<string, unknown>;
      expect([ready.status, body["code"]]).toEqual([503, "database_unavailable"]);
      expect(body["detail"]).toMatch(/retry later/);
      expect(JSON.stringify(body)).not.toMatch(/ECONN|ENOTFOUND|127\.0\.0\.1|postgres|\(/i);
    } finally {
      await down.close();
      await sql.end();
    }
  });
});
