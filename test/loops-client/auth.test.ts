import { inspect } from "node:util";
import { LoopsClient, LoopsError } from "@loops-sync/loops-client";
import { afterAll, beforeEach, describe, expect, it } from "vitest";
import { orderBody } from "../support/api-bodies.ts";
import { json, type LoopsTestServer, startLoopsTestServer } from "../support/loops-test-server.ts";

let server: LoopsTestServer;
const logLines: string[] = [];
const logger = {
  warn: (obj: object, msg: string) => logLines.push(JSON.stringify(obj) + msg),
  debug: (obj: object, msg: string) => logLines.push(JSON.stringify(obj) + msg),
};

function makeClient(overrides: Partial<ConstructorParameters<typeof LoopsClient>[0]> = {}) {
  return new LoopsClient({
    apiUrl: server.apiUrl,
    authUrl: server.authUrl,
    clientId: server.clientId,
    clientSecret: server.clientSecret,
    retry: { baseDelayMs: 5, maxDelayMs: 20 },
    logger,
    ...overrides,
  });
}

beforeEach(async () => {
  await server?.close();
  server = await startLoopsTestServer();
  server.on("GET", "/orders/ord_1", (_req, res) => json(res, 200, orderBody("ord_1")));
});
afterAll(() => server.close());

describe("OAuth client credentials", () => {
  it("sends a form body with the credentials and reuses one token across calls", async () => {
    const client = makeClient();
    const m = client.forMerchant("mer_1");
    await m.orders.get("ord_1");
    await m.orders.get("ord_1");
    await m.orders.get("ord_1");
    expect(server.tokenRequests).toHaveLength(1);
    const token = server.tokenRequests[0]!;
    expect(token.headers["content-type"]).toBe("application/x-www-form-urlencoded");
    const form = new URLSearchParams(token.body.toString());
    expect(form.get("grant_type")).toBe("client_credentials");
    expect(form.get("client_id")).toBe(server.clientId);
    const bearers = new Set(server.requests.map((r) => r.headers.authorization));
    expect(bearers.size).toBe(1);
    expect(client.stats.tokenRequests).toBe(1);
  });

  it("fetches a new token once the cached one is within 60 s of expiry", async () => {
    server.tokenLifetime = 60; // already inside the refresh margin when it arrives
    const m = makeClient().forMerchant("mer_1");
    await m.orders.get("ord_1");
    await m.orders.get("ord_1");
    expect(server.tokenRequests).toHaveLength(2);
    server.tokenLifetime = 61 + 5;
    await m.orders.get("ord_1");
    await m.orders.get("ord_1");
    expect(server.tokenRequests).toHaveLength(3);
  });

  it("after a 401 refreshes the token once and retries once", async () => {
    const client = makeClient();
    const m = client.forMerchant("mer_1");
    await m.orders.get("ord_1");
    server.revokeTokens();
    const order = await m.orders.get("ord_1");
    expect(order.id).toBe("ord_1");
    expect(server.tokenRequests).toHaveLength(2);
    expect(server.requests.map((r) => r.path)).toEqual(["/orders/ord_1", "/orders/ord_1", "/orders/ord_1"]);
  });

  it("a second 401 in a row is surfaced, not looped on", async () => {
    server.on("GET", "/orders/ord_x", (_req, res) => {
      res.writeHead(401, { "content-type": "application/problem+json" });
      res.end(
        JSON.stringify({ title: "Unauthorized", status: 401, code: "unauthorized", request_id: "req_9" }),
      );
    });
    const m = makeClient().forMerchant("mer_1");
    const error = await m.orders.get("ord_x").catch((e: unknown) => e);
    expect(error).toBeInstanceOf(LoopsError);
    expect(error).toMatchObject({ status: 401, code: "unauthorized", requestId: "req_9" });
    expect(server.requests).toHaveLength(2);
    expect(server.tokenRequests).toHaveLength(2);
  });

  it("concurrent callers with no token share a single token request", async () => {
    server.tokenDelayMs = 50;
    const m = makeClient().forMerchant("mer_1");
    await Promise.all(Array.from({ length: 20 }, () => m.orders.get("ord_1")));
    expect(server.tokenRequests).toHaveLength(1);
    expect(server.requests).toHaveLength(20);
  });

  it("concurrent 401s after expiry lead to one refresh", async () => {
    const m = makeClient().forMerchant("mer_1");
    await m.orders.get("ord_1");
    server.revokeTokens();
    server.tokenDelayMs = 30;
    await Promise.all(Array.from({ length: 10 }, () => m.orders.get("ord_1")));
    expect(server.tokenRequests).toHaveLength(2);
  });

  it("bad credentials are an unauthorized LoopsError without the secret", async () => {
    const client = makeClient({ clientSecret: "sk_wrong_SECRET_abc" });
    const error = await client
      .forMerchant("mer_1")
      .orders.get("ord_1")
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(LoopsError);
    expect(error).toMatchObject({ status: 401, code: "invalid_client" });
    expect(server.tokenRequests).toHaveLength(1);
    const dump = `${String(error)} ${inspect(error, { depth: 10 })} ${JSON.stringify(error)}`;
    expect(dump).not.toContain("sk_wrong_SECRET_abc");
  });

  it("authenticate() asks for a token on its own, which later calls reuse, and rejects a wrong secret as refused", async () => {
    const client = makeClient();
    await client.authenticate();
    expect(server.tokenRequests).toHaveLength(1);
    await client.forMerchant("mer_1").orders.get("ord_1");
    expect(server.tokenRequests).toHaveLength(1);

    const wrong = makeClient({ clientSecret: "not-the-secret" });
    const error = await wrong.authenticate().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(LoopsError);
    expect(error).toMatchObject({ kind: "refused", status: 401, route: "{auth_url}" });
    expect(String((error as LoopsError).message)).not.toContain("not-the-secret");
    expect(server.requests).toHaveLength(1);
  });
});

describe("secrets stay out of sight", () => {
  it("neither the secret nor a token appears in inspect, JSON, toString, logs or errors", async () => {
    const client = makeClient();
    const m = client.forMerchant("mer_1");
    await m.orders.get("ord_1");
    server.on("GET", "/orders/ord_bad", (_req, res) => {
      res.destroy();
    });
    const error = await m.orders.get("ord_bad").catch((e: unknown) => e);
    const token = server.requests[0]!.headers.authorization!.replace("Bearer ", "");
    const dumps = [
      inspect(client, { depth: 10, showHidden: true }),
      inspect(m, { depth: 10, showHidden: true }),
      JSON.stringify(client),
      JSON.stringify(m),
      String(client),
      inspect(error, { depth: 10 }),
      String(error),
      ...logLines,
    ].join("\n");
    expect(logLines.length).toBeGreaterThan(0);
    expect(dumps).not.toContain(server.clientSecret);
    expect(dumps).not.toContain(token);
  });
});
