import { createHmac, createSecretKey, timingSafeEqual } from "node:crypto";
import { WebhookError } from "./webhook-error.ts";
import { decodeWebhookSecrets } from "./webhook-secret.ts";

/** Request headers as a fetch `Headers`, a Node `IncomingHttpHeaders`, or a plain lower-case record. */
export type WebhookHeaderSource = Headers | Record<string, string | string[] | undefined>;

export interface WebhookVerifierOptions {
  /** Every accepted whsec_… secret; during a rotation both old and new are listed. */
  secrets: readonly string[];
  /** Seconds a timestamp may lie in the past or the future. Default: 300 (the spec's 5 minutes). */
  toleranceSeconds?: number;
}

export interface VerifyInput {
  headers: WebhookHeaderSource;
  /** The raw body exactly as received; re-serialised JSON would not match. */
  body: Uint8Array;
  /** Current time in Unix seconds. Default: the clock. */
  now?: number;
}

export interface VerifiedWebhook {
  /** The webhook-id header (the event id). */
  id: string;
  /** The webhook-timestamp header, Unix seconds. */
  timestamp: number;
}

export interface WebhookVerifier {
  /** Returns the authenticated id and timestamp, or throws WebhookError (status 401). */
  verify(input: VerifyInput): VerifiedWebhook;
}

const SIGNATURE_BYTES = 32;
const TIMESTAMP = /^\d{1,15}$/;

function header(headers: WebhookHeaderSource, name: string): string | undefined {
  const value = headers instanceof Headers ? headers.get(name) : headers[name];
  const first = Array.isArray(value) ? value[0] : value;
  return first === null || first === undefined || first === "" ? undefined : first;
}

/** `v1,<base64>` entries decoded; other versions are skipped, malformed entries counted. */
function parseSignatures(value: string): { v1: Buffer[]; wellFormed: number } {
  const v1: Buffer[] = [];
  let wellFormed = 0;
  for (const entry of value.split(" ")) {
    const comma = entry.indexOf(",");
    if (comma <= 0 || comma === entry.length - 1) continue;
    wellFormed++;
    if (entry.slice(0, comma) !== "v1") continue;
    v1.push(Buffer.from(entry.slice(comma + 1), "base64"));
  }
  return { v1, wellFormed };
}

/**
 * A Standard Webhooks verifier on node:crypto: the secrets are decoded once, every secret is tried against
 * every `v1` signature in constant time, and the timestamp must lie within the tolerance both ways.
 */
export function createWebhookVerifier({
  secrets,
  toleranceSeconds = 300,
}: WebhookVerifierOptions): WebhookVerifier {
  // KeyObjects once: createHmac with a raw key imports it again on every call, per request.
  const keys = decodeWebhookSecrets(secrets).map((key) => createSecretKey(key));
  if (!Number.isFinite(toleranceSeconds) || toleranceSeconds < 0) {
    throw new RangeError(`toleranceSeconds must be a number of seconds ≥ 0, got ${toleranceSeconds}`);
  }
  return {
    verify({ headers, body, now = Math.floor(Date.now() / 1000) }) {
      const id = header(headers, "webhook-id");
      const timestampText = header(headers, "webhook-timestamp");
      const signatureText = header(headers, "webhook-signature");
      if (!id || !timestampText || !signatureText) {
        const missing = [
          !id && "webhook-id",
          !timestampText && "webhook-timestamp",
          !signatureText && "webhook-signature",
        ].filter(Boolean);
        throw new WebhookError("missing_headers", `missing header(s): ${missing.join(", ")}`);
      }
      if (!TIMESTAMP.test(timestampText)) {
        throw new WebhookError("invalid_timestamp", "webhook-timestamp must be whole Unix seconds");
      }
      const timestamp = Number(timestampText);
      if (now - timestamp > toleranceSeconds) {
        throw new WebhookError(
          "timestamp_too_old",
          `webhook-timestamp is ${now - timestamp} s old; at most ${toleranceSeconds} s accepted`,
        );
      }
      if (timestamp - now > toleranceSeconds) {
        throw new WebhookError(
          "timestamp_too_new",
          `webhook-timestamp is ${timestamp - now} s in the future; at most ${toleranceSeconds} s accepted`,
        );
      }
      const { v1, wellFormed } = parseSignatures(signatureText);
      if (wellFormed === 0) {
        throw new WebhookError(
          "invalid_signature_header",
          "webhook-signature holds no `version,signature` entry",
        );
      }
      const candidates = v1.filter((s) => s.length === SIGNATURE_BYTES);
      if (candidates.length > 0) {
        for (const key of keys) {
          const expected = createHmac("sha256", key).update(`${id}.${timestampText}.`).update(body).digest();
          for (const candidate of candidates) {
            if (timingSafeEqual(expected, candidate)) return { id, timestamp };
          }
        }
      }
      throw new WebhookError(
        "no_matching_signature",
        `none of the ${v1.length} v1 signature(s) matches any of the ${keys.length} configured secret(s)`,
      );
    },
  };
}

/** One-off verification; a receiver should build the verifier once with createWebhookVerifier. */
export function verifyWebhook(input: VerifyInput & WebhookVerifierOptions): VerifiedWebhook {
  return createWebhookVerifier(input).verify(input);
}
