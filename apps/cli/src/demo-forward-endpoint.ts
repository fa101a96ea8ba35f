import { randomBytes } from "node:crypto";
import { createServer, type IncomingMessage } from "node:http";
import type { AddressInfo } from "node:net";
import { createWebhookVerifier } from "@loops-sync/webhooks";

export interface DemoForwardEndpoint {
  url: string;
  /** The whsec_… secret the demo's worker signs with (made for this run). */
  secret: string;
  /** Changes received with a valid signature, and how many of them were a webhook-id seen before. */
  counts(): { received: number; duplicates: number; refused: number };
  close(): Promise<void>;
}

const readBody = async (req: IncomingMessage): Promise<Buffer> => {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
};

/**
 * `demo --forward`'s stand-in for the partner's endpoint: verifies each POST the way a partner would, prints
 * one line per change (`print`), and answers 204. See examples/forward-receiver for a receiver to build on.
 */
export async function startDemoForwardEndpoint(print: (line: string) => void): Promise<DemoForwardEndpoint> {
  const secret = `whsec_${randomBytes(24).toString("base64")}`;
  const verifier = createWebhookVerifier({ secrets: [secret] });
  const seen = new Set<string>();
  let duplicates = 0;
  let refused = 0;
  const server = createServer(async (req, res) => {
    const body = await readBody(req);
    try {
      const { id } = verifier.verify({ headers: req.headers, body });
      const c = JSON.parse(body.toString("utf8")) as Record<string, unknown>;
      if (seen.has(id)) duplicates++;
      seen.add(id);
      const version = c.version === null ? "" : ` v${c.version}`;
      const status = c.status === null ? "" : ` ${c.status}`;
      print(
        `forwarded ${id}: ${c.resource} ${c.resource_id} ${c.operation}${version}${status} (${c.source})`,
      );
      res.writeHead(204).end();
    } catch {
      refused++;
      res.writeHead(401).end();
    }
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/changes`,
    secret,
    counts: () => ({ received: seen.size, duplicates, refused }),
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
