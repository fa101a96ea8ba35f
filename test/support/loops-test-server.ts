import { once } from "node:events";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

/** One request as it arrived on the wire. */
export interface RecordedRequest {
  method: string;
  path: string;
  query: URLSearchParams;
  headers: IncomingMessage["headers"];
  body: Buffer;
  at: number;
  /** The client's port: equal across requests when a kept-alive connection was reused. */
  remotePort: number | undefined;
}

export type Handler = (req: RecordedRequest, res: ServerResponse) => void | Promise<void>;

export interface LoopsTestServer {
  apiUrl: string;
  authUrl: string;
  clientId: string;
  clientSecret: string;
  /** API requests (token requests are in `tokenRequests`). */
  requests: RecordedRequest[];
  tokenRequests: RecordedRequest[];
  /** Answers `METHOD /path` (path relative to /v1, without query). */
  on(method: string, path: string, handler: Handler): void;
  /** Makes every issued token invalid, as if it expired upstream. */
  revokeTokens(): void;
  /** Lifetime in seconds given to new tokens. */
  tokenLifetime: number;
  /** Delay before the token endpoint answers, to widen races. */
  tokenDelayMs: number;
  /** Statuses the token endpoint answers with, one per request, before it issues tokens again. */
  tokenFaults: number[];
  close(): Promise<void>;
}

export function json(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  res.writeHead(status, { "content-type": "application/json", ...headers });
  res.end(JSON.stringify(body));
}

export function problem(
  res: ServerResponse,
  status: number,
  code: string,
  extra: Record<string, unknown> = {},
  headers: Record<string, string> = {},
): void {
  res.writeHead(status, { "content-type": "application/problem+json", ...headers });
  res.end(
    JSON.stringify({
      type: `https://docs.example/errors/${code}`,
      title: code.replaceAll("_", " "),
      status,
      code,
      request_id: `req_${Math.random().toString(36).slice(2, 10)}`,
      ...extra,
    }),
  );
}

/**
 * A small loopback server speaking the Partner API's auth, error and paging conventions, with
 * per-test handlers. Stands in where the sandbox app does not (yet) serve what a test needs.
 */
export async function startLoopsTestServer(): Promise<LoopsTestServer> {
  const handlers = new Map<string, Handler>();
  const validTokens = new Set<string>();
  let tokenCounter = 0;
  const state: LoopsTestServer = {
    apiUrl: "",
    authUrl: "",
    clientId: "cli_test",
    clientSecret: "sk_test_TOPSECRET_value",
    requests: [],
    tokenRequests: [],
    on: (method, path, handler) => handlers.set(`${method} ${path}`, handler),
    revokeTokens: () => validTokens.clear(),
    tokenLifetime: 900,
    tokenDelayMs: 0,
    tokenFaults: [],
    close: async () => {
      server.closeAllConnections();
      server.close();
      await once(server, "close");
    },
  };

  const server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const url = new URL(req.url ?? "/", "http://localhost");
    const recorded: RecordedRequest = {
      method: req.method ?? "GET",
      path: url.pathname,
      query: url.searchParams,
      headers: req.headers,
      body: Buffer.concat(chunks),
      at: Date.now(),
      remotePort: req.socket.remotePort,
    };
    if (url.pathname === "/oauth/token") {
      state.tokenRequests.push(recorded);
      if (state.tokenDelayMs) await new Promise((r) => setTimeout(r, state.tokenDelayMs));
      const fault = state.tokenFaults.shift();
      if (fault !== undefined)
        return problem(res, fault, fault === 429 ? "rate_limited" : "upstream_unavailable");
      const form = new URLSearchParams(recorded.body.toString());
      if (
        form.get("grant_type") !== "client_credentials" ||
        form.get("client_id") !== state.clientId ||
        form.get("client_secret") !== state.clientSecret
      ) {
        return json(res, 401, { error: "invalid_client", error_description: "bad client credentials" });
      }
      const token = `tok_${++tokenCounter}_${Math.random().toString(36).slice(2)}`;
      validTokens.add(token);
      return json(res, 200, { access_token: token, expires_in: state.tokenLifetime, token_type: "Bearer" });
    }
    if (!url.pathname.startsWith("/v1/")) return problem(res, 404, "not_found");
    recorded.path = url.pathname.slice(3);
    state.requests.push(recorded);
    const bearer = req.headers.authorization?.replace(/^Bearer /, "");
    if (!bearer || !validTokens.has(bearer)) return problem(res, 401, "unauthorized");
    const handler = handlers.get(`${recorded.method} ${recorded.path}`);
    if (!handler) return problem(res, 404, "not_found");
    try {
      await handler(recorded, res);
    } catch {
      if (!res.headersSent) problem(res, 500, "upstream_unavailable");
    }
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const { port } = server.address() as AddressInfo;
  state.apiUrl = `http://127.0.0.1:${port}/v1`;
  state.authUrl = `http://127.0.0.1:${port}/oauth/token`;
  return state;
}
