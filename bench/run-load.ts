import { randomBytes } from "node:crypto";
import { createRequire } from "node:module";
import { runHttpLoad, serializeRequest } from "./http-load.ts";
import { percentile } from "./percentile.ts";
import type { SignedWebhook, WebhookSigner } from "./webhook-signer.ts";

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
  /** Requests the pre-signed pool did not cover, signed while the load ran (0 unless the pool ran out). */
  signedDuringRun: number;
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
  overallRate?: number;
  pipelining?: number;
  requests: { setupRequest: (request: AutocannonRequest) => AutocannonRequest }[];
}) => Promise<AutocannonResult>;
const autocannon = createRequire(import.meta.url)("autocannon") as Autocannon;

/**
 * Requests signed per second of load, before it starts. A closed loop sends as fast as the server answers,
 * so the pool is sized for the fastest server measured here (the bare endpoint) with room to spare.
 */
const PRESIGNED_PER_SECOND = Number(process.env.BENCH_PRESIGNED_PER_SECOND || 50_000);

export interface LoadOptions {
  /** Base URL of the server; requests go to POST /webhooks/loops. */
  url: string;
  signer: WebhookSigner;
  seconds: number;
  /** Default: 100 (Loops delivers many webhooks at once across merchants). */
  connections?: number;
  /** Requests per second for all connections together (open pacing); default: as fast as answered. */
  overallRate?: number;
}

/** Distinct order events, signed before the load starts so that the generator's HMAC is not timed. */
function presign<T>(signer: WebhookSigner, count: number, as: (signed: SignedWebhook) => T): () => T {
  const run = randomBytes(4).toString("hex");
  const event = (n: number) => ({
    id: `evt_load_${run}_${n}`,
    type: "order.status_changed",
    merchantId: `mer_load_${n % 20}`,
    locationId: "loc_load",
    orderId: `ord_load_${run}_${n}`,
    status: "accepted",
    version: 2,
  });
  // Only what the generator sends is kept (the closed loop's request bytes): the signed objects are garbage
  // before the run, so they do not weigh on the generator's heap while it runs.
  const pool = Array.from({ length: count }, (_, n) => as(signer.sign(event(n))));
  let next = 0;
  // Past the pool, sign on the spot (counted, so a result that paid for it says so).
  return () => (next < pool.length ? pool[next++]! : as(signer.sign(event(next++))));
}

/**
 * Load on POST /webhooks/loops: every request is a distinct order event, so the receiver verifies, parses
 * and stores each one (nothing deduplicated away). Every request is signed before the timed run, so the
 * load generator's own HMAC does not bound the fastest server it measures; the same generator drives the
 * bare endpoint, so the ratio compares the servers, not the clients. Closed loop (no `overallRate`): the
 * raw-socket generator of http-load.ts, with every request serialized before the run; paced: autocannon.
 */
export async function runLoad({
  url,
  signer,
  seconds,
  connections = 100,
  overallRate,
}: LoadOptions): Promise<LoadResult> {
  const pooled = Math.ceil(seconds * (overallRate ? overallRate * 1.2 : PRESIGNED_PER_SECOND));
  if (overallRate === undefined) return await closedLoop(url, signer, pooled, seconds, connections);
  const nextWebhook = presign(signer, pooled, (signed) => signed);
  let sent = 0;
  const setupRequest = (request: AutocannonRequest): AutocannonRequest => {
    sent++;
    const signed = nextWebhook();
    return {
      ...request,
      method: "POST",
      path: "/webhooks/loops",
      headers: signed.headers,
      body: signed.body,
    };
  };
  const r = await autocannon({
    url,
    connections,
    duration: seconds,
    overallRate,
    requests: [{ setupRequest }],
  });
  return {
    perSecond: r["2xx"] / r.duration,
    p50: r.latency.p50,
    p99: r.latency.p99,
    ok: r["2xx"],
    notOk: r.non2xx,
    errors: r.errors + r.timeouts,
    signedDuringRun: Math.max(0, sent - pooled),
  };
}

/** The closed loop on raw sockets, each request's bytes made before the timed run. */
async function closedLoop(
  url: string,
  signer: WebhookSigner,
  pooled: number,
  seconds: number,
  connections: number,
): Promise<LoadResult> {
  const host = new URL(url).host;
  let sent = 0;
  const nextRequest = presign(signer, pooled, (signed) =>
    serializeRequest(host, "/webhooks/loops", signed.headers, signed.body),
  );
  const next = () => {
    sent++;
    return nextRequest();
  };
  const r = await runHttpLoad({ url, next, connections, seconds });
  const latencies = Array.from(r.latencies.subarray(0, r.count));
  return {
    perSecond: r.ok / r.duration,
    p50: percentile(latencies, 50),
    p99: percentile(latencies, 99),
    ok: r.ok,
    notOk: r.notOk,
    errors: r.errors,
    signedDuringRun: Math.max(0, sent - pooled),
  };
}
