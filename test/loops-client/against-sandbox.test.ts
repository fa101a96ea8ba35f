import { LoopsClient, LoopsError } from "@loops-sync/loops-client";
import { type Sandbox, startSandbox } from "@loops-sync/sandbox";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

let sandbox: Sandbox;
let client: LoopsClient;
const merchantId = "mer_demo_1";

beforeAll(async () => {
  sandbox = await startSandbox();
  client = new LoopsClient({
    apiUrl: sandbox.apiUrl,
    authUrl: sandbox.authUrl,
    clientId: sandbox.credentials.clientId,
    clientSecret: sandbox.credentials.clientSecret,
    retry: { baseDelayMs: 5, maxDelayMs: 20 },
  });
  for (let i = 0; i < 7; i++) sandbox.createOrder({ merchantId });
});
afterAll(() => sandbox.close());

describe("the client against the sandbox", () => {
  it("creates a sandbox order and reads it back as the sandbox holds it", async () => {
    const m = client.forMerchant(merchantId);
    const created = await m.sandbox.createOrder({ location_id: "loc_demo_1a" });
    expect(created.location_id).toBe("loc_demo_1a");
    const read = await m.orders.get(created.id);
    expect(read).toEqual(JSON.parse(JSON.stringify(sandbox.truth.order(created.id))));
  });

  it("pages through every order of the merchant", async () => {
    const ids: string[] = [];
    for await (const order of client.forMerchant(merchantId).orders.iterate({ limit: 3 })) ids.push(order.id);
    const truth = sandbox.truth.orders(merchantId).map((o) => o.id);
    expect(ids.length).toBe(truth.length);
    expect(new Set(ids)).toEqual(new Set(truth));
  });

  it("reads the event log to the end with after + has_more", async () => {
    const ids: string[] = [];
    for await (const event of client.forMerchant(merchantId).events.iterate({ limit: 2, types: "order.*" })) {
      ids.push(event.id);
    }
    const truth = sandbox.truth
      .events(merchantId)
      .filter((e) => e.type.startsWith("order."))
      .map((e) => e.id);
    expect(ids).toEqual(truth);
    const one = await client.forMerchant(merchantId).events.get(ids[0]!);
    expect(one.id).toBe(ids[0]);
  });

  it("gets a new token once after the sandbox expires them", async () => {
    const m = client.forMerchant(merchantId);
    await m.orders.list({ limit: 1 });
    const before = client.stats.tokenRequests;
    sandbox.expireTokens();
    await m.orders.list({ limit: 1 });
    await m.orders.list({ limit: 1 });
    expect(client.stats.tokenRequests).toBe(before + 1);
  });

  it("hands a long 429 back with retryAfter instead of waiting", async () => {
    sandbox.setFaults({ api429Rate: 1, api429RetryAfterSeconds: 60 });
    try {
      const error = await client
        .forMerchant(merchantId)
        .orders.list()
        .catch((e: unknown) => e);
      expect(error).toBeInstanceOf(LoopsError);
      expect(error).toMatchObject({ status: 429, code: "rate_limited", retryAfter: 60 });
    } finally {
      sandbox.setFaults({ api429Rate: 0 });
    }
  });

  it("a merchant the application is not connected to is refused with a typed error", async () => {
    const error = await client
      .forMerchant("mer_unknown")
      .orders.list()
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(LoopsError);
    expect((error as LoopsError).status).toBeGreaterThanOrEqual(400);
    expect((error as LoopsError).requestId).toMatch(/^req_/);
  });
});
