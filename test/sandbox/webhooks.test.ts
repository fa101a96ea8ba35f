import { DEFAULT_WEBHOOK_SECRET, type Sandbox, startSandbox } from "@loops-sync/sandbox";
import { Webhook } from "standardwebhooks";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startReceiver, type TestReceiver } from "../support/sandbox-api.ts";

const ROTATED = "whsec_bmV3LXNlY3JldC1hZnRlci1yb3RhdGlvbg==";

describe("webhook delivery", () => {
  let sandbox: Sandbox;
  let receiver: TestReceiver;

  beforeAll(async () => {
    sandbox = await startSandbox();
    receiver = await startReceiver();
  });
  afterAll(async () => {
    await sandbox.close();
    await receiver.close();
  });

  it("signs every event with each secret so an independent verifier accepts it with either", async () => {
    const endpoint = sandbox.addWebhookEndpoint({
      url: receiver.url,
      secrets: [DEFAULT_WEBHOOK_SECRET, ROTATED],
    });
    const order = sandbox.createOrder({ merchantId: "mer_demo_1" });
    sandbox.advanceOrder(order.id);
    await sandbox.flushDeliveries();
    sandbox.updateWebhookEndpoint(endpoint.id, { enabled: false });

    expect(receiver.received).toHaveLength(2);
    const bodies = receiver.received.map((r) => {
      const headers = r.headers as Record<string, string>;
      expect(headers["webhook-signature"]!.split(" ")).toHaveLength(2);
      const viaOld = new Webhook(DEFAULT_WEBHOOK_SECRET).verify(r.body, headers) as { id: string };
      const viaNew = new Webhook(ROTATED).verify(r.body, headers) as { id: string };
      expect(viaNew).toEqual(viaOld);
      expect(headers["webhook-id"]).toBe(viaOld.id);
      return viaOld as { id: string; type: string; data: Record<string, unknown>; origin: unknown };
    });
    expect(bodies.map((b) => b.type)).toEqual(["order.created", "order.status_changed"]);
    expect(bodies[1]!.data).toEqual({
      order_id: order.id,
      channel_ref: order.channel_ref,
      previous_status: "placed",
      status: "accepted",
      version: 2,
    });
    expect(bodies[1]!.origin).toEqual({ type: "system", application_id: null });
    // The body is the event exactly as GET /events serves it.
    expect(bodies.map((b) => b.id)).toEqual(
      sandbox.truth
        .events("mer_demo_1")
        .slice(-2)
        .map((e) => e.id),
    );
    // A wrong secret fails verification.
    expect(() =>
      new Webhook("whsec_d3Jvbmctc2VjcmV0").verify(
        receiver.received[0]!.body,
        receiver.received[0]!.headers as Record<string, string>,
      ),
    ).toThrow();
  });

  it("only sends the types an endpoint asked for, wildcards included", async () => {
    receiver.received.length = 0;
    const endpoint = sandbox.addWebhookEndpoint({
      url: receiver.url,
      secrets: [DEFAULT_WEBHOOK_SECRET],
      types: ["connection.*"],
    });
    sandbox.createOrder({ merchantId: "mer_demo_2" });
    sandbox.revokeMerchant("mer_demo_2");
    await sandbox.flushDeliveries();
    sandbox.updateWebhookEndpoint(endpoint.id, { enabled: false });
    expect(receiver.received.map((r) => JSON.parse(r.body).type)).toEqual(["connection.revoked"]);
  });

  it("sends a test event on request", async () => {
    receiver.received.length = 0;
    const endpoint = sandbox.addWebhookEndpoint({ url: receiver.url, secrets: [DEFAULT_WEBHOOK_SECRET] });
    sandbox.sendTestWebhook(endpoint.id);
    await sandbox.flushDeliveries();
    expect(receiver.received.map((r) => JSON.parse(r.body).type)).toEqual(["webhook.test"]);
  });

  it("refuses a malformed secret without echoing it", () => {
    expect(() => sandbox.addWebhookEndpoint({ url: receiver.url, secrets: ["not-a-secret-value"] })).toThrow(
      /secrets\[0\]: must be whsec_/,
    );
    try {
      sandbox.addWebhookEndpoint({ url: receiver.url, secrets: ["not-a-secret-value"] });
    } catch (error) {
      expect(String((error as Error).message)).not.toContain("not-a-secret-value");
    }
  });
});
