import { randomBytes } from "node:crypto";
import { createRequire } from "node:module";
import type { WebhookSigner } from "./signedWebhook.ts";

interface AutocannonRequest {
  method?: string;
  path?: string;
  headers?: Record<string, string>;
  body?: string;
}

export interface LoadResult {
  /** Mean 2xx answers per second over the run. */
  perSecond: number;
  p50: number;
  p99: number;
  ok: number;
  notOk: number;
  errors: number;
}

interface AutocannonResult {
  duration: number;
  latency: { p50: number; p99: number };
  "2xx": number;
  non2xx: number;
  errors: number;
  timeouts: number;
}
type Autocannon = (options: {
  url: string;
  connections: number;
  duration: number;
  pipelining?: number;
  requests: { setupRequest: (request: AutocannonRequest) => AutocannonRequest }[];
}) => Promise<AutocannonResult>;
const autocannon = createRequire(import.meta.url)("autocannon") as Autocannon;

export interface LoadOptions {
  /** Base URL of the server; requests go to POST /webhooks/loops. */
  url: string;
  signer: WebhookSigner;
  seconds: number;
  /** Default: 100 (Loops delivers many webhooks at once across merchants). */
  connections?: number;
}

/**
 * Closed-loop load with autocannon: every request is a distinct, freshly signed order event, so the
 * receiver verifies, parses and stores each one (nothing deduplicated away). The same generator drives the
 * bare endpoint, so the ratio compares the servers, not the clients.
 */
export async function runLoad({ url, signer, seconds, connections = 100 }: LoadOptions): Promise<LoadResult> {
  const run = randomBytes(4).toString("hex");
  let n = 0;
  const setupRequest = (request: AutocannonRequest): AutocannonRequest => {
    n++;
    const signed = signer.sign({
      id: `evt_load_${run}_${n}`,
      type: "order.status_changed",
      merchantId: `mer_load_${n % 20}`,
      locationId: "loc_load",
      orderId: `ord_load_${run}_${n}`,
      status: "accepted",
      version: 2,
    });
    return {
      ...request,
      method: "POST",
      path: "/webhooks/loops",
      headers: signed.headers,
      body: signed.body,
    };
  };
  const r = await autocannon({ url, connections, duration: seconds, requests: [{ setupRequest }] });
  return {
    perSecond: r["2xx"] / r.duration,
    p50: r.latency.p50,
    p99: r.latency.p99,
    ok: r["2xx"],
    notOk: r.non2xx,
    errors: r.errors + r.timeouts,
  };
}
