import type { AddressInfo } from "node:net";
import { serve } from "@hono/node-server";
import { Hono } from "hono";
import { createStatusPage, type StatusPageOptions } from "./create-status-page.ts";

export interface ServeStatusPageOptions extends StatusPageOptions {
  /** Default: 0 (any free port). */
  port?: number;
  /** Default: "127.0.0.1" (the page has no login; expose it deliberately). */
  hostname?: string;
  /** Path the page is mounted at. Default: "/status". */
  basePath?: string;
}

export interface ServedStatusPage {
  /** Full address of the page, e.g. http://127.0.0.1:41234/status */
  url: string;
  close(): Promise<void>;
}

/** The operator page on its own HTTP server, for running it apart from the receiver (and for tests). */
export async function serveStatusPage({
  port = 0,
  hostname = "127.0.0.1",
  basePath = "/status",
  ...pageOptions
}: ServeStatusPageOptions): Promise<ServedStatusPage> {
  const app = new Hono().route(basePath, createStatusPage(pageOptions));
  return new Promise((resolve, reject) => {
    const server = serve({ fetch: app.fetch, port, hostname }, (info: AddressInfo) => {
      resolve({
        url: `http://${hostname}:${info.port}${basePath}`,
        close: () =>
          new Promise<void>((done, fail) => {
            server.close((error) => (error ? fail(error) : done()));
            if ("closeAllConnections" in server) server.closeAllConnections();
          }),
      });
    });
    server.once("error", reject);
  });
}
