import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { DEFAULT_SANDBOX_CREDENTIALS, type Sandbox } from "@loops-sync/sandbox";

/** Client-credentials token from a sandbox. */
export async function getToken(
  sandbox: Sandbox,
  {
    clientId = DEFAULT_SANDBOX_CREDENTIALS.clientId,
    clientSecret = DEFAULT_SANDBOX_CREDENTIALS.clientSecret,
  }: { clientId?: string; clientSecret?: string } = {},
): Promise<string> {
  const response = await fetch(sandbox.authUrl, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({
      grant_type: "client_credentials",
      client_id: clientId,
      client_secret: clientSecret,
    }),
  });
  if (response.status !== 200) throw new Error(`token request answered ${response.status}`);
  return ((await response.json()) as { access_token: string }).access_token;
}

/** The problem+json fields tests look at. */
export interface ProblemBody {
  type: string;
  title: string;
  status: number;
  code: string;
  detail?: string;
  request_id: string;
  existing_id?: string;
  errors?: { field: string; message: string }[];
}

export type ApiCaller = <T = ProblemBody>(
  path: string,
  init?: { method?: string; body?: unknown; headers?: Record<string, string> },
) => Promise<{ status: number; headers: Headers; body: T }>;

/** Calls the sandbox API as one merchant with one token. */
export function apiAs(sandbox: Sandbox, token: string, merchantId: string | null = "mer_demo_1"): ApiCaller {
  return async <T>(
    path: string,
    {
      method = "GET",
      body,
      headers = {},
    }: { method?: string; body?: unknown; headers?: Record<string, string> } = {},
  ) => {
    const response = await fetch(`${sandbox.apiUrl}${path}`, {
      method,
      headers: {
        authorization: `Bearer ${token}`,
        ...(merchantId ? { "service-merchant-id": merchantId } : {}),
        ...(body !== undefined ? { "content-type": "application/json" } : {}),
        ...headers,
      },
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    });
    const text = await response.text();
    return {
      status: response.status,
      headers: response.headers,
      body: (text ? JSON.parse(text) : null) as T,
    };
  };
}

export interface ReceivedWebhook {
  headers: IncomingHttpHeaders;
  body: string;
  at: number;
}

export interface TestReceiver {
  url: string;
  received: ReceivedWebhook[];
  /** Status to answer with; default 204. */
  reply: (req: ReceivedWebhook) => number;
  close(): Promise<void>;
}

/** A plain node:http server that records every webhook it gets. */
export async function startReceiver(
  reply: (req: ReceivedWebhook) => number = () => 204,
): Promise<TestReceiver> {
  const receiver: TestReceiver = { url: "", received: [], reply, close: async () => {} };
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const got = { headers: req.headers, body: Buffer.concat(chunks).toString("utf8"), at: Date.now() };
      receiver.received.push(got);
      res.statusCode = receiver.reply(got);
      res.end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  receiver.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/webhooks/loops`;
  receiver.close = () =>
    new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    });
  return receiver;
}
