// A partner's endpoint for forwarding tests and the bench: a real HTTP server on loopback that checks every
// request with the standardwebhooks package (not our own verifier), records what it received and answered,
// and can fail on purpose (random 500s, a slow answer, an answer of the test's choosing such as a 429 with
// Retry-After, or no listener at all for an outage).

import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { Webhook } from "standardwebhooks";

/** One request the endpoint received. */
export interface ForwardRequest {
  webhookId: string;
  /** The body's `position`. */
  position: number;
  resource: string;
  resourceId: string;
  body: Record<string, unknown>;
  /** The standardwebhooks verifier accepted it. */
  signatureValid: boolean;
  /** The raw webhook-signature header. */
  signatureHeader: string;
  /** For each of `alsoVerifyWith`, in order: the standardwebhooks verifier with that secret alone accepted it. */
  validFor: boolean[];
  /** What the endpoint answered. */
  status: number;
  /** Another request with the same webhook-id was being answered when this one arrived. */
  overlapped: boolean;
  /** When overlapped: the receivedAt of the oldest request with its webhook-id still being answered. */
  overlappedSince: number | null;
  /** Date.now() when the request's body had arrived. */
  receivedAt: number;
  /** Date.now() when the answer was sent. */
  answeredAt: number;
}

/** An answer of the test's choosing. */
export interface ForwardAnswer {
  status: number;
  headers?: Record<string, string>;
}

export interface ForwardEndpointOptions {
  /** The whsec_… secret to verify with. */
  secret: string;
  /** Share of requests answered 500 at random. Default: 0. */
  failRate?: number;
  /** Milliseconds before each answer. Default: 0. */
  answerDelayMs?: number;
  /** Default: Math.random. */
  random?: () => number;
  /** More secrets, each checked on its own (`validFor`): a sender rotating its secret signs with each. */
  alsoVerifyWith?: string[];
  /** Chooses the answer to a validly signed request (0-based arrival `index`); undefined: the usual one. */
  answer?: (request: { index: number; position: number }) => ForwardAnswer | undefined;
}

export interface ForwardEndpoint {
  readonly url: string;
  /** Every request, in arrival order. */
  readonly requests: ForwardRequest[];
  /** The requests answered 2xx: what the sender counts as delivered. */
  accepted(): ForwardRequest[];
  setFailRate(rate: number): void;
  /** The most requests being answered at once so far. */
  maxConcurrent(): number;
  /** Stops listening and drops every connection: a sender gets "connection refused". */
  down(): Promise<void>;
  /** Listens again on the same port. */
  up(): Promise<void>;
  close(): Promise<void>;
}

const readBody = async (req: IncomingMessage): Promise<string> => {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString("utf8");
};

export async function startForwardEndpoint({
  secret,
  failRate = 0,
  answerDelayMs = 0,
  random = Math.random,
  alsoVerifyWith = [],
  answer,
}: ForwardEndpointOptions): Promise<ForwardEndpoint> {
  const verifier = new Webhook(secret);
  const others = alsoVerifyWith.map((s) => new Webhook(s));
  const requests: ForwardRequest[] = [];
  /** The receivedAt of each request being answered, by webhook-id. */
  const answering = new Map<string, number[]>();
  let rate = failRate;
  let arrived = 0;
  let concurrent = 0;
  let maxConcurrent = 0;
  const handle = async (req: IncomingMessage, res: import("node:http").ServerResponse) => {
    concurrent++;
    maxConcurrent = Math.max(maxConcurrent, concurrent);
    const raw = await readBody(req);
    const receivedAt = Date.now();
    const index = arrived++;
    const webhookId = String(req.headers["webhook-id"] ?? "");
    const earlier = answering.get(webhookId) ?? [];
    const overlappedSince = earlier.length > 0 ? Math.min(...earlier) : null;
    answering.set(webhookId, [...earlier, receivedAt]);
    let signatureValid = true;
    try {
      verifier.verify(raw, req.headers as Record<string, string>);
    } catch {
      signatureValid = false;
    }
    const validFor = others.map((v) => {
      try {
        v.verify(raw, req.headers as Record<string, string>);
        return true;
      } catch {
        return false;
      }
    });
    const body = JSON.parse(raw) as Record<string, unknown>;
    if (answerDelayMs > 0) await new Promise((r) => setTimeout(r, answerDelayMs));
    const chosen = signatureValid ? answer?.({ index, position: Number(body.position) }) : undefined;
    const status = chosen?.status ?? (!signatureValid ? 401 : random() < rate ? 500 : 204);
    requests.push({
      webhookId,
      position: Number(body.position),
      resource: String(body.resource),
      resourceId: String(body.resource_id),
      body,
      signatureValid,
      signatureHeader: String(req.headers["webhook-signature"] ?? ""),
      validFor,
      status,
      overlapped: overlappedSince !== null,
      overlappedSince,
      receivedAt,
      answeredAt: Date.now(),
    });
    const still = answering.get(webhookId) ?? [];
    still.splice(still.indexOf(receivedAt), 1);
    if (still.length === 0) answering.delete(webhookId);
    concurrent--;
    res.writeHead(status, chosen?.headers).end(status === 500 ? "injected failure" : undefined);
  };
  let server: Server = createServer((req, res) => void handle(req, res));
  const listen = (port: number) =>
    new Promise<number>((resolve, reject) => {
      server.once("error", reject);
      server.listen(port, "127.0.0.1", () => resolve((server.address() as AddressInfo).port));
    });
  const port = await listen(0);
  const shut = () =>
    new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    });
  return {
    url: `http://127.0.0.1:${port}/loops-sync/changes?token=query-token`,
    requests,
    accepted: () => requests.filter((r) => r.status >= 200 && r.status < 300),
    setFailRate: (r) => {
      rate = r;
    },
    maxConcurrent: () => maxConcurrent,
    down: shut,
    async up() {
      server = createServer((req, res) => void handle(req, res));
      await listen(port);
    },
    close: shut,
  };
}
