// Receiving loops-sync's forwarded changes on your side (README, "Forwarding changes to your endpoint").
// Run: FORWARD_SECRET=whsec_… PORT=3000 node examples/forward-receiver/forward-receiver.ts
// then point loops-sync's FORWARD_URL at http://<this host>:3000/loops-sync/changes.
import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { Webhook } from "standardwebhooks";

/** One forwarded change: a row of replica.changes plus `data`, the resource as mirrored when it was sent. */
export interface ForwardedChange {
  position: number;
  resource: string;
  resource_id: string;
  merchant_id: string | null;
  operation: "insert" | "update" | "delete";
  version: number | null;
  previous_version: number | null;
  status: string | null;
  previous_status: string | null;
  source: string;
  event_id: string | null;
  changed_at: string;
  /** The upstream JSON of the resource when it was sent; null for a delete. */
  data: unknown;
}

/**
 * What a real receiver keeps in its own database, in the transaction that applies the change: the
 * webhook-ids seen (a unique key) and the highest position applied per resource.
 */
export interface ReceiverState {
  seenIds: Set<string>;
  newestPosition: Map<string, number>;
}

export type Outcome = "applied" | "duplicate" | "older" | "invalid_signature";

/**
 * Handles one request: verify the signature (standardwebhooks), drop a webhook-id already seen (delivery is
 * at least once), drop a change older than one already applied for the same resource (a retried duplicate may
 * arrive after a newer change), else apply it. Answer 2xx for everything but a bad signature: a 2xx is what
 * stops the retries.
 */
export async function receiveChange(
  verifier: Webhook,
  state: ReceiverState,
  raw: string,
  headers: Record<string, string>,
  apply: (change: ForwardedChange) => Promise<void> | void,
): Promise<{ status: number; outcome: Outcome }> {
  let change: ForwardedChange;
  try {
    change = verifier.verify(raw, headers) as ForwardedChange;
  } catch {
    return { status: 401, outcome: "invalid_signature" };
  }
  const id = headers["webhook-id"] ?? "";
  if (state.seenIds.has(id)) return { status: 204, outcome: "duplicate" };
  const key = `${change.resource}/${change.resource_id}`;
  const newest = state.newestPosition.get(key) ?? 0;
  state.seenIds.add(id);
  if (change.position <= newest) return { status: 204, outcome: "older" };
  await apply(change);
  state.newestPosition.set(key, change.position);
  return { status: 204, outcome: "applied" };
}

const readBody = async (req: IncomingMessage): Promise<string> => {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString("utf8");
};

/** An HTTP server answering POST /loops-sync/changes with `receiveChange`. */
export async function startForwardReceiver({
  secret,
  port = 3000,
  host = "127.0.0.1",
  apply,
  onOutcome = () => {},
}: {
  secret: string;
  port?: number;
  host?: string;
  apply: (change: ForwardedChange) => Promise<void> | void;
  onOutcome?: (outcome: Outcome, webhookId: string) => void;
}): Promise<{ url: string; server: Server }> {
  const verifier = new Webhook(secret);
  const state: ReceiverState = { seenIds: new Set(), newestPosition: new Map() };
  const server = createServer(async (req, res) => {
    if (req.method !== "POST" || !req.url?.startsWith("/loops-sync/changes")) {
      res.writeHead(404).end();
      return;
    }
    const raw = await readBody(req);
    const headers = Object.fromEntries(
      Object.entries(req.headers).map(([k, v]) => [k, Array.isArray(v) ? v.join(",") : (v ?? "")]),
    );
    try {
      const { status, outcome } = await receiveChange(verifier, state, raw, headers, apply);
      onOutcome(outcome, headers["webhook-id"] ?? "");
      res.writeHead(status).end();
    } catch {
      // Not applied: a 5xx makes loops-sync send it again.
      res.writeHead(500).end();
    }
  });
  await new Promise<void>((resolve) => server.listen(port, host, resolve));
  const { port: bound } = server.address() as AddressInfo;
  return { url: `http://${host}:${bound}/loops-sync/changes`, server };
}

if (import.meta.main) {
  const secret = process.env.FORWARD_SECRET;
  if (!secret) throw new Error("set FORWARD_SECRET to the whsec_… secret loops-sync signs with");
  const { url } = await startForwardReceiver({
    secret,
    port: Number(process.env.PORT ?? 3000),
    apply: (c) =>
      console.log(
        JSON.stringify({
          position: c.position,
          resource: c.resource,
          id: c.resource_id,
          operation: c.operation,
          version: c.version,
        }),
      ),
  });
  console.error(`receiving forwarded changes at ${url}`);
}
