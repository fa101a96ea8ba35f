import { randomBytes } from "node:crypto";
import type { Sandbox } from "@loops-sync/sandbox";
import { Pool } from "undici";
import type { WebhookSigner } from "./webhook-signer.ts";

export interface SentEvent {
  orderId: string;
  version: number;
  /** performance.now() when the POST left and when its 2xx arrived. */
  sentAt: number;
  ackAt: number;
}

export interface TrafficOptions {
  sandbox: Sandbox;
  signer: WebhookSigner;
  /** The receiver's base URL. */
  receiverUrl: string;
  /** Events per second, held for the whole run. */
  rate: number;
  seconds: number;
  /** Real ms between two lifecycle steps of one order, as a kitchen would take. Default: 1000. */
  stepMs?: number;
  /** Called with each acknowledged event. */
  onAck: (event: SentEvent) => void;
}

export interface TrafficResult {
  sent: number;
  acked: number;
  failed: number;
  ordersCreated: number;
}

const TICK_MS = 5;
const STEPS = 4;

/**
 * Open-loop traffic at a fixed rate: each event is a real change of a sandbox order (so the worker's GET
 * returns that version or newer), then delivered to the receiver as Loops would sign it. Open orders move
 * one lifecycle step per `stepMs`; when none is due, a new order is placed. The send does not wait for
 * earlier answers, so a slow receiver shows up as latency, not as a lower rate.
 */
export async function sendOrderTraffic({
  sandbox,
  signer,
  receiverUrl,
  rate,
  seconds,
  stepMs = 1000,
  onAck,
}: TrafficOptions): Promise<TrafficResult> {
  const run = randomBytes(3).toString("hex");
  const result: TrafficResult = { sent: 0, acked: 0, failed: 0, ordersCreated: 0 };
  const open: { orderId: string; dueAt: number; steps: number }[] = [];
  const inFlight = new Set<Promise<void>>();
  // undici's request API, not fetch: a third of fetch's CPU per request on the cores the service shares.
  const pool = new Pool(receiverUrl, { connections: 128 });
  const merchants = sandbox.merchantIds;
  const started = performance.now();

  const sendOne = () => {
    const now = performance.now();
    const head = open[0];
    let order: ReturnType<Sandbox["createOrder"]>;
    let type: string;
    if (head && head.dueAt <= now) {
      open.shift();
      order = sandbox.advanceOrder(head.orderId);
      type = "order.status_changed";
      if (head.steps + 1 < STEPS)
        open.push({ orderId: order.id, dueAt: now + stepMs, steps: head.steps + 1 });
    } else {
      order = sandbox.createOrder({ merchantId: merchants[result.ordersCreated % merchants.length]! });
      result.ordersCreated++;
      type = "order.created";
      open.push({ orderId: order.id, dueAt: now + stepMs, steps: 0 });
    }
    result.sent++;
    const signed = signer.signOrder(`evt_fresh_${run}_${result.sent}`, type, order);
    const sentAt = performance.now();
    const request = pool
      .request({ method: "POST", path: "/webhooks/loops", headers: signed.headers, body: signed.body })
      .then(async (response) => {
        await response.body.dump();
        if (response.statusCode >= 200 && response.statusCode < 300) {
          result.acked++;
          onAck({ orderId: order.id, version: order.version, sentAt, ackAt: performance.now() });
        } else result.failed++;
      })
      .catch(() => {
        result.failed++;
      })
      .finally(() => inFlight.delete(request));
    inFlight.add(request);
  };

  await new Promise<void>((resolve) => {
    const timer = setInterval(() => {
      const elapsed = performance.now() - started;
      const owed = Math.min(rate * seconds, Math.floor((rate * elapsed) / 1000)) - result.sent;
      for (let i = 0; i < owed; i++) sendOne();
      if (elapsed >= seconds * 1000) {
        clearInterval(timer);
        resolve();
      }
    }, TICK_MS);
  });
  await Promise.all(inFlight);
  await pool.close();
  return result;
}
