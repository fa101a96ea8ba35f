import { request as httpRequest } from "node:http";
import type { EventEnvelope } from "@loops-sync/db";
import { signWebhook } from "@loops-sync/webhooks";

export const SECRET = "whsec_" + Buffer.from("receiver test secret, 32 bytes..").toString("base64");
export const OLD_SECRET = "whsec_" + Buffer.from("the secret being rotated out.....").toString("base64");
export const APPLICATION_ID = "app_loops_sync";

let counter = 0;
/** A fresh, valid order event; ids are unique per call. */
export function makeEvent(overrides: Partial<EventEnvelope> = {}): EventEnvelope {
  counter++;
  return {
    id: `evt_${process.pid}_${Date.now()}_${counter}`,
    type: "order.status_changed",
    created_at: new Date().toISOString(),
    merchant_id: "mer_test",
    location_id: "loc_test",
    connection_id: "con_test",
    origin: { type: "channel", application_id: null },
    data: { order_id: `ord_${counter}`, channel_ref: "X-1", status: "accepted", version: 2 },
    ...overrides,
  };
}

export interface DeliverOptions {
  secrets?: string[];
  id?: string;
  timestamp?: number;
  headers?: Record<string, string>;
  contentType?: string;
}

/** POSTs a body to the receiver the way Loops would, signed unless `headers` replaces the signature. */
export async function deliver(
  url: string,
  body: string | EventEnvelope,
  {
    secrets = [SECRET],
    id,
    timestamp = Math.floor(Date.now() / 1000),
    headers = {},
    contentType = "application/json",
  }: DeliverOptions = {},
): Promise<{ status: number; json: Record<string, unknown>; headers: Headers }> {
  const text = typeof body === "string" ? body : JSON.stringify(body);
  const eventId = id ?? (typeof body === "string" ? "evt_raw" : body.id);
  const signed = signWebhook({ id: eventId, timestamp, body: text, secrets });
  const response = await fetch(`${url}/webhooks/loops`, {
    method: "POST",
    headers: { "content-type": contentType, ...signed, ...headers },
    body: text,
  });
  const raw = await response.text();
  let json: Record<string, unknown> = {};
  try {
    json = JSON.parse(raw) as Record<string, unknown>;
  } catch {}
  return { status: response.status, json, headers: response.headers };
}

/**
 * Sends headers promising `declaredBytes` (or chunked when undefined) and then only `sentBytes`, and
 * resolves with the status the server answers while the rest is still unsent.
 */
export function postPartial(
  url: string,
  { declaredBytes, sentBytes }: { declaredBytes?: number; sentBytes: number },
): Promise<{ status: number; connection: string | undefined; body: string }> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string> = { "content-type": "application/json" };
    if (declaredBytes !== undefined) headers["content-length"] = String(declaredBytes);
    const req = httpRequest(`${url}/webhooks/loops`, { method: "POST", headers }, (res) => {
      let body = "";
      res.setEncoding("utf8");
      res.on("data", (chunk: string) => {
        body += chunk;
      });
      res.on("end", () => {
        resolve({ status: res.statusCode ?? 0, connection: res.headers.connection, body });
        req.destroy();
      });
    });
    req.on("error", reject);
    req.write(Buffer.alloc(sentBytes, "a"));
    // Deliberately never end(): the server must answer without the rest.
  });
}
