import { createServer, type Server } from "node:http";
import type { Registry } from "prom-client";

export interface MetricsServer {
  url: string;
  close(): Promise<void>;
}

export interface StartMetricsServerOptions {
  registry: Registry;
  /** Default: METRICS_PORT's default, 9091; 0 picks a free port. */
  port?: number;
  /** Default: "0.0.0.0". */
  host?: string;
}

/**
 * `GET /metrics` and `GET /healthz` for a process without the receiver (a worker alone), so Prometheus
 * can scrape every worker. In `start` the receiver serves the same registry.
 */
export async function startMetricsServer({
  registry,
  port = 9091,
  host = "0.0.0.0",
}: StartMetricsServerOptions): Promise<MetricsServer> {
  const server: Server = createServer((req, res) => {
    if (req.method === "GET" && req.url === "/metrics") {
      registry.metrics().then(
        (body) => res.writeHead(200, { "content-type": registry.contentType }).end(body),
        () => res.writeHead(500).end(),
      );
    } else if (req.method === "GET" && req.url === "/healthz") {
      res.writeHead(200, { "content-type": "application/json" }).end('{"status":"ok"}');
    } else {
      res
        .writeHead(404, { "content-type": "application/problem+json" })
        .end(JSON.stringify({ type: "about:blank", title: "Not Found", status: 404, code: "not_found" }));
    }
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, host, () => resolve());
  });
  const address = server.address();
  const actual = typeof address === "object" && address ? address.port : port;
  return {
    url: `http://${host === "0.0.0.0" ? "127.0.0.1" : host}:${actual}`,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
