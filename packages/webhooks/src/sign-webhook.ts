import { createHmac, type KeyObject } from "node:crypto";
import { decodeWebhookSecrets } from "./webhook-secret.ts";

export interface SignWebhookOptions {
  /** The webhook-id (the event id). */
  id: string;
  /** Unix seconds, or a Date. */
  timestamp: number | Date;
  /** The exact bytes that will be sent. */
  body: string | Uint8Array;
  /** One or more whsec_… secrets; one `v1,` signature per secret, space-separated. */
  secrets: readonly string[];
}

export interface WebhookHeaders {
  "webhook-id": string;
  "webhook-timestamp": string;
  "webhook-signature": string;
  [header: string]: string;
}

/** The HMAC-SHA256 of `id.timestamp.body` under one key, base64: the Standard Webhooks `v1` signature. */
export function computeSignature(
  key: Buffer | KeyObject,
  id: string,
  timestamp: string,
  body: string | Uint8Array,
): string {
  return createHmac("sha256", key).update(`${id}.${timestamp}.`).update(body).digest("base64");
}

/** Signs a webhook the way Loops does (Standard Webhooks), for tests, the sandbox and tools. */
export function signWebhook({ id, timestamp, body, secrets }: SignWebhookOptions): WebhookHeaders {
  const seconds = String(timestamp instanceof Date ? Math.floor(timestamp.getTime() / 1000) : timestamp);
  const signatures = decodeWebhookSecrets(secrets).map(
    (key) => `v1,${computeSignature(key, id, seconds, body)}`,
  );
  return { "webhook-id": id, "webhook-timestamp": seconds, "webhook-signature": signatures.join(" ") };
}
