// POST /webhooks/loops over real HTTP into a real Postgres: what is accepted, what is refused, and with what.
import { type RunningReceiver, startReceiver } from "@loops-sync/receiver";
import { Webhook } from "standardwebhooks";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "../support/db.ts";
import {
  APPLICATION_ID,
  deliver,
  makeEvent,
  OLD_SECRET,
  postPartial,
  SECRET,
} from "../support/webhook-fixtures.ts";

const VECTOR = {
  secret: "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw",
  id: "msg_p5jXN8AQM9LWM0D4loKWxJek",
  timestamp: "1614265330",
  body: '{"test": 2432232314}',
  signature: "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=",
};

describe("POST /webhooks/loops", () => {
  let db: TestDatabase;
  let receiver: RunningReceiver;
  let vectorReceiver: RunningReceiver;

  beforeAll(async () => {
    db = await createTestDatabase();
    receiver = await startReceiver({
      sql: db.sql,
      webhookSecrets: [SECRET, OLD_SECRET],
      applicationId: APPLICATION_ID,
      maxBodyBytes: 4096,
      port: 0,
      host: "127.0.0.1",
    });
    // The official vector is from 2021: only a receiver with a tolerance reaching back that far accepts it.
    vectorReceiver = await startReceiver({
      sql: db.sql,
      webhookSecrets: [VECTOR.secret],
      toleranceSeconds: Math.floor(Date.now() / 1000) - Number(VECTOR.timestamp) + 3600,
      port: 0,
      host: "127.0.0.1",
    });
  });
  afterAll(async () => {
    await receiver?.close();
    await vectorReceiver?.close();
    await db?.drop();
  });

  const rows = async (id: string) =>
    db.sql<{ id: string; type: string; source: string; outcome: string; payload: Record<string, unknown> }[]>`
      select id, type, source, outcome, payload from sync.events where id = ${id}`;
  /**
   * How many times the event was handed to the worker: process_events jobs naming it, plus the order refresh
   * queue rows of its order (where the inbox puts order events; no worker runs in this file).
   */
  const jobsFor = async (id: string) =>
    (
      await db.sql<{ n: number }[]>`
        select (select count(*)::int from graphile_worker._private_jobs j
                join graphile_worker._private_tasks t on t.id = j.task_id
                where t.identifier = 'process_events' and j.payload::jsonb -> 'eventIds' ? ${id})
             + (select count(*)::int from sync.order_refresh q
                join sync.events e on e.order_id = q.order_id and e.merchant_id = q.merchant_id
                where e.id = ${id}) as n`
    )[0]!.n;

  it("accepts the official Standard Webhooks vector's signature (its body is no event envelope: 400)", async () => {
    const send = (signature: string, body = VECTOR.body) =>
      fetch(`${vectorReceiver.url}/webhooks/loops`, {
        method: "POST",
        headers: {
          "content-type": "application/json",
          "webhook-id": VECTOR.id,
          "webhook-timestamp": VECTOR.timestamp,
          "webhook-signature": signature,
        },
        body,
      }).then(async (r) => ({ status: r.status, body: (await r.json()) as { code: string } }));
    const ok = await send(VECTOR.signature);
    expect(ok).toMatchObject({ status: 400, body: { code: "invalid_envelope" } });
    const tampered = await send(VECTOR.signature, '{"test": 2432232315}');
    expect(tampered).toMatchObject({ status: 401, body: { code: "no_matching_signature" } });
  });

  it("stores an event signed by the standardwebhooks package, with one job, and answers 200 after commit", async () => {
    const event = makeEvent({ type: "order.created", location_id: null, surprise: { kept: [1, 2] } });
    const body = JSON.stringify(event);
    const at = new Date();
    const response = await fetch(`${receiver.url}/webhooks/loops`, {
      method: "POST",
      headers: {
        "content-type": "application/json; charset=utf-8",
        "webhook-id": event.id,
        "webhook-timestamp": String(Math.floor(at.getTime() / 1000)),
        "webhook-signature": new Webhook(SECRET).sign(event.id, at, body),
      },
      body,
    });
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ id: event.id, status: "stored" });
    const [row] = await rows(event.id);
    expect(row).toMatchObject({ type: "order.created", source: "webhook", outcome: "pending" });
    expect(row!.payload["surprise"]).toEqual({ kept: [1, 2] });
    expect(await jobsFor(event.id)).toBe(1);
  });

  it("stores the body as Loops sent it: numbers beyond JavaScript's precision are kept exactly", async () => {
    const event = makeEvent({ type: "order.created" });
    // A JavaScript round trip (parse, then serialize the parsed envelope) turns this into 12345678901234567000.
    const body = JSON.stringify(event).replace(/}$/, ',"reference":12345678901234567891,"ratio":0.10}');
    expect((await deliver(receiver.url, body, { id: event.id })).status).toBe(200);
    const [row] = await db.sql<{ reference: string; ratio: string; merchant: string; at: Date }[]>`
      select payload ->> 'reference' as reference, payload ->> 'ratio' as ratio, merchant_id as merchant,
             created_at as at
      from sync.events where id = ${event.id}`;
    expect(row).toEqual({
      reference: "12345678901234567891",
      ratio: "0.10",
      merchant: event.merchant_id,
      at: new Date(event.created_at),
    });
  });

  it("accepts the second (rotated) secret, several signatures, and unknown event types", async () => {
    const rotated = makeEvent();
    expect((await deliver(receiver.url, rotated, { secrets: [OLD_SECRET] })).status).toBe(200);
    const several = makeEvent({ type: "menu.something_new_upstream" });
    const other = "whsec_" + Buffer.from("a secret we were never told about").toString("base64");
    const result = await deliver(receiver.url, several, { secrets: [other, SECRET] });
    expect(result.status).toBe(200);
    expect((await rows(several.id))[0]!.type).toBe("menu.something_new_upstream");
    expect(await jobsFor(rotated.id)).toBe(1);
  });

  it("answers a duplicate with 2xx and adds no second row or job", async () => {
    const event = makeEvent();
    expect((await deliver(receiver.url, event)).json).toEqual({ id: event.id, status: "stored" });
    const again = await deliver(receiver.url, event);
    expect(again.status).toBe(200);
    expect(again.json).toEqual({ id: event.id, status: "duplicate" });
    expect(await rows(event.id)).toHaveLength(1);
    expect(await jobsFor(event.id)).toBe(1);
  });

  it("stores a self-originated event as ignored_self without a job", async () => {
    const event = makeEvent({ origin: { type: "api", application_id: APPLICATION_ID } });
    const result = await deliver(receiver.url, event);
    expect(result.json).toEqual({ id: event.id, status: "ignored_self" });
    expect((await rows(event.id))[0]!.outcome).toBe("ignored_self");
    expect(await jobsFor(event.id)).toBe(0);
  });

  it("refuses forgeries with 401 problem+json naming the reason, storing nothing", async () => {
    const wrong = "whsec_" + Buffer.from("an attacker's guess at a secret!").toString("base64");
    // Each case is built from the clock's second just before its request (the header has whole seconds).
    // The receiver floors its own clock a moment later; if a second ticks over in between, "301 s ahead" may
    // have been read as 300, so that attempt says nothing and the case is sent again with a fresh event.
    const cases: [string, (second: number) => Parameters<typeof deliver>[2]][] = [
      ["no_matching_signature", () => ({ secrets: [wrong] })],
      ["missing_headers", () => ({ headers: { "webhook-signature": "" } })],
      ["timestamp_too_old", (second) => ({ timestamp: second - 301 })],
      ["timestamp_too_new", (second) => ({ timestamp: second + 301 })],
      ["invalid_timestamp", () => ({ headers: { "webhook-timestamp": "soon" } })],
      ["invalid_signature_header", () => ({ headers: { "webhook-signature": "nonsense" } })],
    ];
    for (const [code, options] of cases) {
      let event: ReturnType<typeof makeEvent>;
      let result: Awaited<ReturnType<typeof deliver>>;
      for (let attempt = 1; ; attempt++) {
        const second = Math.floor(Date.now() / 1000);
        event = makeEvent();
        result = await deliver(receiver.url, event, options(second));
        if (Math.floor(Date.now() / 1000) === second || attempt === 3) break;
      }
      expect({ code, status: result.status, body: result.json["code"] }).toEqual({
        code,
        status: 401,
        body: code,
      });
      expect(result.headers.get("content-type")).toBe("application/problem+json");
      expect(JSON.stringify(result.json)).not.toContain(SECRET.slice(6));
      expect(await rows(event.id)).toHaveLength(0);
    }
    // A body altered after signing.
    const event = makeEvent();
    const now = Math.floor(Date.now() / 1000);
    const signed = await fetch(`${receiver.url}/webhooks/loops`, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        "webhook-id": event.id,
        "webhook-timestamp": String(now),
        "webhook-signature": new Webhook(SECRET).sign(event.id, new Date(now * 1000), JSON.stringify(event)),
      },
      body: JSON.stringify({ ...event, merchant_id: "mer_someone_else" }),
    });
    expect(signed.status).toBe(401);
    expect(await rows(event.id)).toHaveLength(0);
  });

  it("refuses authentic but malformed events with 400", async () => {
    const event = makeEvent();
    const mismatch = await deliver(receiver.url, event, { id: "evt_other" });
    expect([mismatch.status, mismatch.json["code"]]).toEqual([400, "id_mismatch"]);
    const notJson = await deliver(receiver.url, "this is { not json", { id: "evt_raw" });
    expect([notJson.status, notJson.json["code"]]).toEqual([400, "invalid_json"]);
    const { merchant_id: _m, ...noMerchant } = makeEvent();
    const invalid = await deliver(receiver.url, JSON.stringify(noMerchant), { id: noMerchant.id });
    expect([invalid.status, invalid.json["code"]]).toEqual([400, "invalid_envelope"]);
    expect(String(invalid.json["detail"])).toContain("merchant_id");
    expect(await rows(event.id)).toHaveLength(0);
    expect(await rows(noMerchant.id)).toHaveLength(0);
  });

  it("answers 415 for another content type and 405 for another method", async () => {
    const wrongType = await deliver(receiver.url, makeEvent(), { contentType: "text/plain" });
    expect([wrongType.status, wrongType.json["code"]]).toEqual([415, "unsupported_media_type"]);
    const get = await fetch(`${receiver.url}/webhooks/loops`);
    expect(get.status).toBe(405);
    expect(get.headers.get("allow")).toBe("POST");
    expect(((await get.json()) as { code: string }).code).toBe("method_not_allowed");
    const missing = await fetch(`${receiver.url}/nowhere`);
    expect(missing.status).toBe(404);
  });

  it("refuses an oversized body with 413 before reading the rest, by Content-Length or while streaming", async () => {
    // 10 MB promised, 1 KiB sent: the answer comes while the client still owes the rest.
    const declared = await postPartial(receiver.url, { declaredBytes: 10_000_000, sentBytes: 1024 });
    expect(declared.status).toBe(413);
    expect(declared.connection).toBe("close");
    expect(JSON.parse(declared.body).code).toBe("payload_too_large");
    // Chunked, no length: counted as it streams and cut at the limit (4096 here).
    const chunked = await postPartial(receiver.url, { sentBytes: 5000 });
    expect(chunked.status).toBe(413);
    // Within the limit is fine; one byte over is not.
    const event = makeEvent();
    const padded = (n: number) => JSON.stringify({ ...event, data: { pad: "x".repeat(n) } });
    const base = padded(0).length;
    expect((await deliver(receiver.url, padded(4096 - base), { id: event.id })).status).toBe(200);
    const over = makeEvent();
    const body = JSON.stringify({
      ...over,
      data: { pad: "x".repeat(4097 - JSON.stringify({ ...over, data: { pad: "" } }).length) },
    });
    expect(body.length).toBe(4097);
    expect((await deliver(receiver.url, body, { id: over.id })).status).toBe(413);
    expect(await rows(over.id)).toHaveLength(0);
  });
});
