// A small real HTTP server standing in for the Loops API: a token endpoint, and GET /v1/orders/{id}
// answering whatever body the test registered for that id, byte for byte.

import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";

export interface HostileUpstream {
  apiUrl: string;
  authUrl: string;
  /** Bearer tokens this server issued (the secrets suite looks for them in logs). */
  issuedTokens: string[];
  /** Answers GET /v1/orders/{orderId} with `body` (a string is sent as is, anything else as JSON). */
  serve(orderId: string, body: unknown, status?: number): void;
  /** Answers GET /v1/orders (every page: these orders, no next page) and GET /v1/events (these events). */
  serveLists(lists: { orders: unknown[]; events: unknown[] }): void;
  /** GET /v1/orders/{id} calls so far, per id. */
  calls(orderId: string): number;
  close(): Promise<void>;
}

export async function startHostileUpstream({
  clientSecret,
}: {
  clientSecret: string;
}): Promise<HostileUpstream> {
  const answers = new Map<string, { body: string; status: number }>();
  const calls = new Map<string, number>();
  const issuedTokens: string[] = [];
  let lists: { orders: unknown[]; events: unknown[] } = { orders: [], events: [] };
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const url = new URL(req.url ?? "/", "http://upstream");
      const reply = (status: number, body: string) => {
        res.writeHead(status, { "content-type": "application/json" });
        res.end(body);
      };
      if (req.method === "POST" && url.pathname === "/oauth/token") {
        const form = new URLSearchParams(Buffer.concat(chunks).toString("utf8"));
        const basic = Buffer.from(
          (req.headers.authorization ?? "").replace(/^Basic /, ""),
          "base64",
        ).toString();
        if (form.get("client_secret") !== clientSecret && !basic.endsWith(`:${clientSecret}`)) {
          return reply(
            401,
            JSON.stringify({ type: "about:blank", title: "Unauthorized", status: 401, code: "unauthorized" }),
          );
        }
        const token = `hostile_at_${Math.random().toString(36).slice(2)}${Date.now()}`;
        issuedTokens.push(token);
        return reply(200, JSON.stringify({ access_token: token, expires_in: 900, token_type: "Bearer" }));
      }
      const match = /^\/v1\/orders\/([^/]+)$/.exec(url.pathname);
      const bearer = (req.headers.authorization ?? "").replace(/^Bearer /, "");
      if (req.method === "GET" && issuedTokens.includes(bearer) && url.pathname === "/v1/orders") {
        return reply(200, JSON.stringify({ data: lists.orders, next_cursor: null }));
      }
      if (req.method === "GET" && issuedTokens.includes(bearer) && url.pathname === "/v1/events") {
        const after = url.searchParams.get("after");
        const from = after ? lists.events.findIndex((e) => (e as { id: string }).id === after) + 1 : 0;
        return reply(200, JSON.stringify({ data: lists.events.slice(from), has_more: false }));
      }
      if (!match || req.method !== "GET" || !issuedTokens.includes(bearer)) {
        return reply(
          404,
          JSON.stringify({ type: "about:blank", title: "Not found", status: 404, code: "not_found" }),
        );
      }
      const id = decodeURIComponent(match[1]!);
      calls.set(id, (calls.get(id) ?? 0) + 1);
      const answer = answers.get(id);
      if (!answer)
        return reply(404, JSON.stringify({ title: "Not found", status: 404, code: "order_not_found" }));
      return reply(answer.status, answer.body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    apiUrl: `${url}/v1`,
    authUrl: `${url}/oauth/token`,
    issuedTokens,
    serve(orderId, body, status = 200) {
      answers.set(orderId, { body: typeof body === "string" ? body : JSON.stringify(body), status });
    },
    serveLists(given) {
      lists = given;
    },
    calls: (orderId) => calls.get(orderId) ?? 0,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
