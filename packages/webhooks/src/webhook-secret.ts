import { WebhookError } from "./webhook-error.ts";

const PREFIX = "whsec_";
const BASE64 = /^[A-Za-z0-9+/]+={0,2}$/;

/**
 * The HMAC key of a Standard Webhooks secret: the base64 after `whsec_` (the prefix is optional, as in the
 * reference libraries). Refuses anything that is not base64, so a mangled secret fails at start, not as
 * 401s on every delivery.
 */
export function decodeWebhookSecret(secret: string, position = 0): Buffer {
  const encoded = secret.startsWith(PREFIX) ? secret.slice(PREFIX.length) : secret;
  if (encoded.length === 0 || !BASE64.test(encoded)) {
    throw new WebhookError(
      "invalid_secret",

      `webhook secret #${position + 1} (${secret.length} characters, hidden) is not whsec_ followed by base64`,
    );
  }
  return Buffer.from(encoded, "base64");
}

/** Decodes every secret, refusing an empty list (a receiver without a secret would accept nothing). */
export function decodeWebhookSecrets(secrets: readonly string[]): Buffer[] {
  if (secrets.length === 0) {
    throw new WebhookError("invalid_secret", "no webhook secret given; set at least one whsec_… secret");
  }
  return secrets.map((s, i) => decodeWebhookSecret(s, i));
}
