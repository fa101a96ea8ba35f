import {
  DEFAULT_WEBHOOK_SECRET,
  DISABLE_AFTER_FAILING_MS,
  RETRY_SCHEDULE_MS,
  type Sandbox,
  startSandbox,
} from "@loops-sync/sandbox";
import { afterEach, describe, expect, it } from "vitest";
import { startReceiver, type TestReceiver } from "../support/sandbox-api.ts";

const HOUR = 3600_000;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function until<T>(probe: () => T | undefined, timeoutMs = 10_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error("condition not met in time");
    await sleep(5);
  }
}

describe("webhook retry schedule", () => {
  let sandbox: Sandbox | undefined;
  let receiver: TestReceiver | undefined;
  afterEach(async () => {
    await sandbox?.close();
    await receiver?.close();
  });

  it("waits exactly the scheduled time after a failed attempt (stepped clock)", async () => {
    sandbox = await startSandbox({ timeScale: 1 });
    receiver = await startReceiver(() => 500);
    sandbox.addWebhookEndpoint({ url: receiver.url, secrets: [DEFAULT_WEBHOOK_SECRET] });
    sandbox.createOrder({ merchantId: "mer_demo_1" });
    await sandbox.flushDeliveries();
    expect(receiver.received).toHaveLength(1);
    for (const [i, wait] of RETRY_SCHEDULE_MS.slice(1, 4).entries()) {
      sandbox.clock.advance(wait - 500);
      // advance() starts what has fallen due before it returns, and flushDeliveries() waits for what it
      // started: an early attempt would have reached the receiver by now.
      await sandbox.flushDeliveries();
      expect(receiver.received, `attempt ${i + 2} must not come early`).toHaveLength(i + 1);
      const [delivery] = sandbox.deliveries();
      expect(Date.parse(delivery!.next_attempt_at!), "the retry still ahead").toBeGreaterThan(
        sandbox.clock.now(),
      );
      sandbox.clock.advance(600);
      await until(() => (receiver!.received.length === i + 2 ? true : undefined));
      await sandbox.flushDeliveries();
    }
    // Every attempt carries the same webhook-id.
    expect(new Set(receiver.received.map((r) => r.headers["webhook-id"])).size).toBe(1);
  });

  it("lives through the whole schedule under a scaled clock, then marks the delivery failed", async () => {
    const timeScale = 40_000;
    sandbox = await startSandbox({ timeScale });
    receiver = await startReceiver(() => 503);
    sandbox.addWebhookEndpoint({ url: receiver.url, secrets: [DEFAULT_WEBHOOK_SECRET] });
    sandbox.createOrder({ merchantId: "mer_demo_1" });
    const delivery = await until(() => sandbox!.deliveries().find((d) => d.status === "failed"), 8000);
    expect(delivery.attempts).toHaveLength(8);
    expect(receiver.received).toHaveLength(8);
    // Never early; late only by what a loaded machine's timers add (up to 250 real ms per step).
    for (let i = 1; i < 8; i++) {
      const gap =
        Date.parse(delivery.attempts[i]!.started_at) - Date.parse(delivery.attempts[i - 1]!.ended_at);
      expect(gap).toBeGreaterThanOrEqual(RETRY_SCHEDULE_MS[i]! - 1);
      expect((gap - RETRY_SCHEDULE_MS[i]!) / timeScale).toBeLessThan(250);
    }
    const span = Date.parse(delivery.attempts[7]!.started_at) - Date.parse(delivery.attempts[0]!.started_at);
    expect(span).toBeGreaterThanOrEqual(RETRY_SCHEDULE_MS.reduce((a, b) => a + b, 0));
    expect(sandbox.stats().webhooksFailed).toBe(1);
  });

  it("disables an endpoint after 3 days of unbroken failure and stops sending to it", async () => {
    sandbox = await startSandbox({ timeScale: 1 });
    receiver = await startReceiver(() => 500);
    const endpoint = sandbox.addWebhookEndpoint({ url: receiver.url, secrets: [DEFAULT_WEBHOOK_SECRET] });
    sandbox.createOrder({ merchantId: "mer_demo_1" });
    await sandbox.flushDeliveries();
    sandbox.clock.advance(DISABLE_AFTER_FAILING_MS - 2 * HOUR); // attempt 2 runs now, 70 h into failure
    await until(() => (receiver!.received.length === 2 ? true : undefined));
    await sandbox.flushDeliveries();
    expect(sandbox.updateWebhookEndpoint(endpoint.id, {}).enabled).toBe(true);
    sandbox.clock.advance(3 * HOUR); // attempt 3, now past 72 h
    await until(() => (receiver!.received.length === 3 ? true : undefined));
    await sandbox.flushDeliveries();
    const after = sandbox.updateWebhookEndpoint(endpoint.id, {});
    expect(after.enabled).toBe(false);
    expect(after.disabledAt).not.toBeNull();
    expect(sandbox.stats().webhookEndpointsDisabled).toBe(1);
    sandbox.createOrder({ merchantId: "mer_demo_1" });
    await sandbox.flushDeliveries();
    expect(receiver.received).toHaveLength(3);
    // Re-enabled, it gets new events again.
    receiver.reply = () => 204;
    sandbox.updateWebhookEndpoint(endpoint.id, { enabled: true });
    sandbox.createOrder({ merchantId: "mer_demo_1" });
    await sandbox.flushDeliveries();
    expect(receiver.received).toHaveLength(4);
  });

  it("counts an answer slower than the reply timeout as a failure", async () => {
    sandbox = await startSandbox({ webhookReplyTimeoutMs: 50 });
    receiver = await startReceiver(() => 204);
    const slow = await import("node:http").then(({ createServer }) => {
      const server = createServer((_req, res) => setTimeout(() => res.end(), 300));
      return new Promise<import("node:http").Server>((r) => server.listen(0, "127.0.0.1", () => r(server)));
    });
    const port = (slow.address() as import("node:net").AddressInfo).port;
    sandbox.addWebhookEndpoint({ url: `http://127.0.0.1:${port}/`, secrets: [DEFAULT_WEBHOOK_SECRET] });
    sandbox.createOrder({ merchantId: "mer_demo_1" });
    await sandbox.flushDeliveries();
    const [delivery] = sandbox.deliveries();
    expect(delivery?.attempts[0]?.error).toBe("timeout");
    expect(delivery?.status).toBe("pending");
    await new Promise<void>((r) => {
      slow.close(() => r());
      slow.closeAllConnections();
    });
  });
});
