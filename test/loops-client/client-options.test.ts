import { LoopsClient, LoopsError } from "@loops-sync/loops-client";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { waitFor } from "#testkit/wait-for";
import { orderBody } from "../support/api-bodies.ts";
import { json, type LoopsTestServer, problem, startLoopsTestServer } from "../support/loops-test-server.ts";

let server: LoopsTestServer;

beforeAll(async () => {
  server = await startLoopsTestServer();
  server.on("GET", "/orders/ord_1", (_q, res) => json(res, 200, orderBody("ord_1")));
});
afterAll(() => server.close());
beforeEach(() => {
  server.requests.length = 0;
});

function options() {
  return {
    apiUrl: server.apiUrl,
    authUrl: server.authUrl,
    clientId: server.clientId,
    clientSecret: server.clientSecret,
  };
}

describe("client options", () => {
  it("refuses bad options naming the option, never echoing the secret", () => {
    expect(() => new LoopsClient({ ...options(), apiUrl: "ftp://x" })).toThrow(LoopsError);
    expect(() => new LoopsClient({ ...options(), apiUrl: "ftp://x" })).toThrow(/^apiUrl: /);
    expect(() => new LoopsClient({ ...options(), clientSecret: "" })).toThrow(/^clientSecret: /);
    expect(() => new LoopsClient({ ...options(), timeoutMs: 0 })).toThrow(/^timeoutMs: /);
    expect(() => new LoopsClient({ ...options(), retry: { maxAttempts: 0 } })).toThrow(/maxAttempts/);
  });

  it("sends its User-Agent and reuses kept-alive connections for consecutive calls", async () => {
    const client = new LoopsClient({ ...options(), userAgent: "partner-backend/2.1" });
    const m = client.forMerchant("mer_1");
    for (let i = 0; i < 5; i++) await m.orders.get("ord_1");
    // Six requests (a token and five reads); without keep-alive each would open its own connection.
    const ports = [...server.tokenRequests, ...server.requests].map((r) => r.remotePort);
    expect(ports).toHaveLength(6);
    expect(new Set(ports).size).toBeLessThanOrEqual(2);
    expect(server.requests[0]!.headers["user-agent"]).toBe("partner-backend/2.1");
  });

  it("a caller's abort ends a Retry-After wait at once, with no further request", async () => {
    server.on("GET", "/orders/ord_slow", (_q, res) =>
      problem(res, 429, "rate_limited", {}, { "retry-after": "3600" }),
    );
    // A wait far beyond the test's timeout: only the abort can end it in time.
    const client = new LoopsClient({ ...options(), retry: { maxRetryAfterSeconds: 3600 } });
    const controller = new AbortController();
    const pending = client
      .forMerchant("mer_1")
      .orders.get("ord_slow", { signal: controller.signal })
      .catch((e: unknown) => e);
    // A retry is counted just before its wait begins.
    await waitFor(() => client.stats.retries === 1, { what: "the client waiting out the Retry-After" });
    controller.abort();
    const error = await pending;
    expect((error as Error).name).toBe("AbortError");
    expect(server.requests).toHaveLength(1);
  });

  it("uses the fetch it is given", async () => {
    const urls: string[] = [];
    const client = new LoopsClient({
      ...options(),
      fetch: (url, init) => {
        urls.push(url);
        return fetch(url, init);
      },
    });
    await client.forMerchant("mer_1").orders.get("ord_1");
    expect(urls).toEqual([server.authUrl, `${server.apiUrl}/orders/ord_1`]);
  });
});
