import { getEventListeners } from "node:events";
import { LoopsClient, LoopsError, type RequestInfo } from "@loops-sync/loops-client";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { orderBody } from "../support/api-bodies.ts";
import { json, type LoopsTestServer, problem, startLoopsTestServer } from "../support/loops-test-server.ts";

let server: LoopsTestServer;
const seen: RequestInfo[] = [];

function makeClient(extra: Partial<ConstructorParameters<typeof LoopsClient>[0]> = {}) {
  return new LoopsClient({
    apiUrl: server.apiUrl,
    authUrl: server.authUrl,
    clientId: server.clientId,
    clientSecret: server.clientSecret,
    retry: { baseDelayMs: 5, maxDelayMs: 20 },
    onRequest: (info) => seen.push(info),
    ...extra,
  });
}

/** Answers with `failures` in turn, then with `ok`. */
function failThen(
  method: string,
  path: string,
  failures: number,
  fail: Parameters<typeof server.on>[2],
  ok: unknown,
) {
  let n = 0;
  server.on(method, path, (req, res) => (n++ < failures ? fail(req, res) : json(res, 200, ok)));
}

beforeEach(async () => {
  seen.length = 0;
  server = await startLoopsTestServer();
});
afterEach(() => server.close());

describe("429 rate limiting", () => {
  it("waits the Retry-After seconds before the next call", async () => {
    failThen(
      "GET",
      "/orders/ord_1",
      1,
      (_q, res) => problem(res, 429, "rate_limited", {}, { "retry-after": "1" }),
      orderBody("ord_1"),
    );
    const order = await makeClient().forMerchant("mer_1").orders.get("ord_1");
    expect(order.id).toBe("ord_1");
    const [first, second] = server.requests;
    expect(second!.at - first!.at).toBeGreaterThanOrEqual(1000);
  });

  it("waits until a Retry-After HTTP date", async () => {
    const until = (Math.ceil(Date.now() / 1000) + 1) * 1000;
    failThen(
      "GET",
      "/orders/ord_1",
      1,
      (_q, res) => problem(res, 429, "rate_limited", {}, { "retry-after": new Date(until).toUTCString() }),
      orderBody("ord_1"),
    );
    await makeClient().forMerchant("mer_1").orders.get("ord_1");
    expect(server.requests).toHaveLength(2);
    expect(server.requests[1]!.at).toBeGreaterThanOrEqual(until);
  });

  it("throws at once, with retryAfter, when the wait exceeds maxRetryAfterSeconds", async () => {
    server.on("GET", "/orders/ord_1", (_q, res) =>
      problem(res, 429, "rate_limited", {}, { "retry-after": "120" }),
    );
    const error = await makeClient()
      .forMerchant("mer_1")
      .orders.get("ord_1")
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(LoopsError);
    expect(error).toMatchObject({ status: 429, code: "rate_limited", retryAfter: 120, retryable: true });
    expect(server.requests).toHaveLength(1);
  });

  it("gives up after maxAttempts and reports rate_limited with retryAfter", async () => {
    server.on("GET", "/orders", (_q, res) => {
      res.writeHead(429, { "retry-after": "0" });
      res.end();
    });
    const error = await makeClient({ retry: { maxAttempts: 3, baseDelayMs: 1 } })
      .forMerchant("mer_1")
      .orders.list()
      .catch((e: unknown) => e);
    expect(error).toMatchObject({ status: 429, code: "rate_limited", retryAfter: 0 });
    expect(server.requests).toHaveLength(3);
  });

  it("retries a POST without an idempotency key after 429 (nothing was done)", async () => {
    failThen(
      "POST",
      "/sandbox/orders",
      1,
      (_q, res) => problem(res, 429, "rate_limited", {}, { "retry-after": "0" }),
      orderBody("ord_9"),
    );
    const order = await makeClient().forMerchant("mer_1").sandbox.createOrder({ location_id: "loc_1" });
    expect(order.id).toBe("ord_9");
    expect(server.requests).toHaveLength(2);
  });
});

describe("5xx, resets and timeouts", () => {
  it("retries a 5xx with backoff and succeeds", async () => {
    failThen(
      "GET",
      "/orders/ord_1",
      2,
      (_q, res) => problem(res, 503, "upstream_unavailable"),
      orderBody("ord_1"),
    );
    const client = makeClient();
    await client.forMerchant("mer_1").orders.get("ord_1");
    expect(server.requests).toHaveLength(3);
    expect(client.stats.retries).toBe(2);
  });

  it("surfaces the last 5xx after maxAttempts", async () => {
    server.on("GET", "/orders/ord_1", (_q, res) =>
      problem(res, 502, "upstream_unavailable", { detail: "gateway" }),
    );
    const error = await makeClient()
      .forMerchant("mer_1")
      .orders.get("ord_1")
      .catch((e: unknown) => e);
    expect(error).toMatchObject({
      status: 502,
      code: "upstream_unavailable",
      detail: "gateway",
      retryable: true,
    });
    expect(server.requests).toHaveLength(4);
  });

  it("reuses one Idempotency-Key across retries of a POST", async () => {
    failThen("POST", "/brands", 2, (_q, res) => problem(res, 500, "upstream_unavailable"), {
      id: "brd_1",
      merchant_id: "mer_1",
      name: { en: "A", ar: "ب" },
      created_at: "2026-11-22T05:00:00Z",
      updated_at: "2026-11-22T05:00:00Z",
    });
    const m = makeClient().forMerchant("mer_1");
    await m.brands.create({ external_ref: "b-1", name: { en: "A", ar: "ب" } });
    const keys = server.requests.map((r) => r.headers["idempotency-key"]);
    expect(keys).toHaveLength(3);
    expect(new Set(keys).size).toBe(1);
    // A new logical call gets a new key.
    await m.brands.create({ external_ref: "b-2", name: { en: "A", ar: "ب" } });
    expect(server.requests.at(-1)!.headers["idempotency-key"]).not.toBe(keys[0]);
  });

  it("never retries a POST without an idempotency key after a 5xx", async () => {
    server.on("POST", "/sandbox/orders", (_q, res) => problem(res, 500, "upstream_unavailable"));
    const error = await makeClient()
      .forMerchant("mer_1")
      .sandbox.createOrder({ location_id: "loc_1" })
      .catch((e: unknown) => e);
    expect(error).toMatchObject({ status: 500 });
    expect(server.requests).toHaveLength(1);
  });

  it("retries a connection reset, then reports a network LoopsError", async () => {
    server.on("GET", "/orders/ord_1", (_q, res) => {
      res.socket?.destroy();
    });
    const error = await makeClient()
      .forMerchant("mer_1")
      .orders.get("ord_1")
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(LoopsError);
    expect((error as LoopsError).kind).toBe("network");
    expect(error).toMatchObject({ code: "network_error", retryable: true, route: "/orders/{order_id}" });
    expect(server.requests).toHaveLength(4);
  });

  it("times out a slow answer per request and reports a timeout LoopsError", async () => {
    // The answer comes only once the test has its error: each attempt times out, however loaded the machine.
    let release!: () => void;
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    server.on("GET", "/orders/ord_1", async (_q, res) => {
      await held;
      json(res, 200, orderBody("ord_1"));
    });
    try {
      // Long enough for the token request on a loaded machine; the held answer never comes in time.
      const error = await makeClient({ timeoutMs: 500, retry: { maxAttempts: 2, baseDelayMs: 1 } })
        .forMerchant("mer_1")
        .orders.get("ord_1")
        .catch((e: unknown) => e);
      expect(error).toBeInstanceOf(LoopsError);
      expect((error as LoopsError).kind).toBe("timeout");
      expect(error).toMatchObject({ code: "timeout", retryable: true, timeoutMs: 500 });
      expect(server.requests).toHaveLength(2);
    } finally {
      release();
    }
  });

  it("disarms a request's timeout once its answer is read: no abort fires later, no listener stays", async () => {
    server.on("GET", "/orders/ord_1", (_q, res) => json(res, 200, orderBody("ord_1")));
    // Far more than a loaded machine needs for a call on loopback: the call itself must never time out.
    const timeoutMs = 1000;
    const signals: AbortSignal[] = [];
    const client = makeClient({
      timeoutMs,
      // The default transport, watched: the signal each request is sent with.
      fetch: (url, init) => {
        signals.push(init.signal);
        return globalThis.fetch(url, init);
      },
    });
    const caller = new AbortController();
    expect((await client.forMerchant("mer_1").orders.get("ord_1", { signal: caller.signal })).id).toBe(
      "ord_1",
    );
    // Node runs timers in the order they fall due, and those due at the same moment in the order they were
    // set: one of `timeoutMs` set now fires after every timer the call set. A timer left armed would have
    // aborted its request (and built a DOMException) by then.
    await new Promise((r) => setTimeout(r, timeoutMs));
    expect(signals.map((s) => s.aborted)).toEqual(signals.map(() => false));
    expect(getEventListeners(caller.signal, "abort")).toHaveLength(0);
  });

  it("does not retry a 4xx", async () => {
    server.on("GET", "/orders/ord_1", (_q, res) => problem(res, 404, "not_found"));
    const error = await makeClient()
      .forMerchant("mer_1")
      .orders.get("ord_1")
      .catch((e: unknown) => e);
    expect(error).toMatchObject({ status: 404, code: "not_found", retryable: false });
    expect(server.requests).toHaveLength(1);
  });

  it("a token endpoint 5xx is retried like any other", async () => {
    server.on("GET", "/orders/ord_1", (_q, res) => json(res, 200, orderBody("ord_1")));
    server.tokenFaults = [503, 502];
    const order = await makeClient().forMerchant("mer_1").orders.get("ord_1");
    expect(order.id).toBe("ord_1");
    expect(server.tokenRequests).toHaveLength(3);
    expect(server.requests).toHaveLength(1);
  });

  it("a token endpoint failing throughout surfaces as a LoopsError of the auth route", async () => {
    server.tokenFaults = [503, 503, 503, 503, 503];
    const error = await makeClient()
      .forMerchant("mer_1")
      .orders.get("ord_1")
      .catch((e: unknown) => e);
    expect(error).toMatchObject({ status: 503, route: "{auth_url}" });
    expect(server.tokenRequests).toHaveLength(4);
    expect(server.requests).toHaveLength(0);
  });
});

describe("request accounting", () => {
  it("counts requests by endpoint template and reports each attempt to onRequest", async () => {
    failThen(
      "GET",
      "/orders/ord_1",
      1,
      (_q, res) => problem(res, 503, "upstream_unavailable"),
      orderBody("ord_1"),
    );
    server.on("GET", "/orders/ord_2", (_q, res) => json(res, 200, orderBody("ord_2")));
    const client = makeClient();
    const m = client.forMerchant("mer_1");
    await m.orders.get("ord_1");
    await m.orders.get("ord_2");
    expect(client.stats).toMatchObject({
      requests: 3,
      tokenRequests: 1,
      retries: 1,
      byEndpoint: { "GET /orders/{order_id}": 3 },
    });
    expect(seen.map((s) => [s.status, s.attempt, s.merchantId])).toEqual([
      [503, 1, "mer_1"],
      [200, 2, "mer_1"],
      [200, 1, "mer_1"],
    ]);
    client.resetStats();
    expect(client.stats.requests).toBe(0);
  });
});
