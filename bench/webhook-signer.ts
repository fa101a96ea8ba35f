import { createSecretKey, randomBytes } from "node:crypto";
import { computeSignature, decodeWebhookSecret } from "@loops-sync/webhooks";

/** The order event fields the bench varies; the rest of the envelope is filled in like Loops does. */
export interface BenchOrderEvent {
  id: string;
  type: string;
  merchantId: string;
  locationId: string;
  orderId: string;
  status: string;
  version: number;
}

export interface SignedWebhook {
  headers: Record<string, string>;
  body: string;
}

/** The fields of a sandbox order an order event carries. */
export interface BenchOrder {
  id: string;
  merchant_id: string;
  location_id: string;
  status: string;
  version: number;
}

export interface WebhookSigner {
  /** The whsec_ secret the receiver must be given. */
  secret: string;
  sign(event: BenchOrderEvent): SignedWebhook;
  /** The event `id` of `type` about `order`, at its current status and version. */
  signOrder(id: string, type: string, order: BenchOrder): SignedWebhook;
}

/** Signs order events exactly as Loops does (Standard Webhooks, v1 HMAC-SHA256), with a fresh secret. */
export function createWebhookSigner({
  secret = `whsec_${randomBytes(32).toString("base64")}`,
}: {
  /** Default: a random secret for this run. */
  secret?: string;
} = {}): WebhookSigner {
  // A KeyObject: the HMAC does not import the key again for every event.
  const key = createSecretKey(decodeWebhookSecret(secret));
  const signer: WebhookSigner = {
    secret,
    sign(e) {
      const body = JSON.stringify({
        id: e.id,
        type: e.type,
        created_at: new Date().toISOString(),
        merchant_id: e.merchantId,
        location_id: e.locationId,
        connection_id: "con_bench",
        origin: { type: "channel", application_id: null },
        data: { order_id: e.orderId, channel_ref: `R-${e.orderId}`, status: e.status, version: e.version },
      });
      const timestamp = String(Math.floor(Date.now() / 1000));
      return {
        body,
        headers: {
          "content-type": "application/json",
          "webhook-id": e.id,
          "webhook-timestamp": timestamp,
          "webhook-signature": `v1,${computeSignature(key, e.id, timestamp, body)}`,
        },
      };
    },
    signOrder: (id, type, order) =>
      signer.sign({
        id,
        type,
        merchantId: order.merchant_id,
        locationId: order.location_id,
        orderId: order.id,
        status: order.status,
        version: order.version,
      }),
  };
  return signer;
}
