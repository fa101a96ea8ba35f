import type { KeyObject } from "node:crypto";
import { activeTracing } from "@loops-sync/tracing";
import { computeSignature } from "@loops-sync/webhooks";
import { parseRetryAfterMs } from "./parse-retry-after.ts";
import { traceForwardDelivery } from "./trace-forward-delivery.ts";

/**
 * How one POST of a change ended: a 2xx in time, or why not (short, never the secret or the URL's query). A
 * 429 or 503 with a readable Retry-After carries it, in milliseconds (unbounded: the forwarder bounds it).
 */
export type SendResult =
  | { ok: true }
  | { ok: false; kind: "status" | "timeout" | "network"; error: string; retryAfterMs?: number };

export interface SendChangeOptions {
  /** FORWARD_URL. */
  url: string;
  /** The decoded FORWARD_SECRET, one key per secret (`decodeWebhookSecrets`): each signs every request. */
  keys: readonly (Buffer | KeyObject)[];
  /** FORWARD_TIMEOUT_MS: the whole exchange, answer included. */
  timeoutMs: number;
  /** Aborts the request (the worker stopping). */
  signal?: AbortSignal;
  /** The User-Agent header. */
  userAgent: string;
}

/** The longest answer body kept in `last_error`. */
const ERROR_BODY_CHARS = 120;

/** The Standard Webhooks id of a change: its feed position, so a receiver dedupes on it. */
export const changeWebhookId = (position: number): string => `chg_${position}`;

/**
 * POSTs one change's body, signed by the Standard Webhooks scheme (the signer Loops' webhooks are checked
 * against). Redirects are not followed: a 3xx is not a 2xx, and following one would send the body elsewhere.
 */
export function sendChange(position: number, body: string, options: SendChangeOptions): Promise<SendResult> {
  if (!activeTracing()) return postChange(position, body, options);
  return traceForwardDelivery(position, options.url, () => postChange(position, body, options));
}

async function postChange(
  position: number,
  body: string,
  { url, keys, timeoutMs, signal, userAgent }: SendChangeOptions,
): Promise<SendResult> {
  const id = changeWebhookId(position);
  const timestamp = String(Math.floor(Date.now() / 1000));
  const timeout = AbortSignal.timeout(timeoutMs);
  try {
    const response = await fetch(url, {
      method: "POST",
      redirect: "manual",
      signal: signal ? AbortSignal.any([signal, timeout]) : timeout,
      headers: {
        "content-type": "application/json",
        "user-agent": userAgent,
        "webhook-id": id,
        "webhook-timestamp": timestamp,
        // Standard Webhooks: space-separated signatures, so a receiver with either secret accepts (rotation).
        "webhook-signature": keys.map((key) => `v1,${computeSignature(key, id, timestamp, body)}`).join(" "),
      },
      body,
    });
    // Read to the end, so the connection is kept for the next change.
    const text = await response.text();
    if (response.status >= 200 && response.status < 300) return { ok: true };
    const detail = text.replace(/\s+/g, " ").trim().slice(0, ERROR_BODY_CHARS);
    const error = `HTTP ${response.status}${detail ? `: ${detail}` : ""}`;
    const retryAfter =
      response.status === 429 || response.status === 503
        ? parseRetryAfterMs(response.headers.get("retry-after"))
        : undefined;
    return retryAfter === undefined
      ? { ok: false, kind: "status", error }
      : { ok: false, kind: "status", error, retryAfterMs: retryAfter };
  } catch (error) {
    if (timeout.aborted) return { ok: false, kind: "timeout", error: `no answer within ${timeoutMs} ms` };
    if (signal?.aborted) return { ok: false, kind: "network", error: "aborted: the worker is stopping" };
    return { ok: false, kind: "network", error: describeNetworkError(error) };
  }
}

/** undici's "fetch failed" says nothing; its cause's code does (ECONNREFUSED, ENOTFOUND, …). */
function describeNetworkError(error: unknown): string {
  const cause = (error as { cause?: { code?: string; message?: string } }).cause;
  if (cause?.code) return `connection failed: ${cause.code}`;
  return `connection failed: ${cause?.message ?? (error as Error).message ?? String(error)}`.slice(0, 200);
}
