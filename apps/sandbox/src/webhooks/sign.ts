import { Webhook } from "standardwebhooks";

/**
 * Standard Webhooks headers for one attempt. With several secrets (rotation) the signature header carries
 * one `v1,…` per secret, space separated, so receivers holding either the old or the new secret verify.
 * The timestamp is real Unix time, not sandbox time: receivers compare it with their own clock.
 */
export function signWebhook(
  secrets: readonly string[],
  messageId: string,
  body: string,
  at: Date = new Date(),
): Record<string, string> {
  const signature = secrets.map((s) => new Webhook(s).sign(messageId, at, body)).join(" ");
  return {
    "content-type": "application/json",
    "webhook-id": messageId,
    "webhook-timestamp": String(Math.floor(at.getTime() / 1000)),
    "webhook-signature": signature,
  };
}
