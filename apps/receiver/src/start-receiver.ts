import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import { serve } from "@hono/node-server";
import type { Registry } from "prom-client";
import { answerClientErrors } from "./client-error.ts";
import { createReceiver, type ReceiverAppOptions } from "./create-receiver-app.ts";

export interface StartReceiverOptions extends ReceiverAppOptions {
  /** Port to listen on; 0 picks a free one. Default: 8080. */
  port?: number;
  /** Address to listen on. Default: "0.0.0.0". */
  host?: string;
  /** Longest wait for in-flight requests on close before their connections are cut. Default: 10000 ms. */
  shutdownTimeoutMs?: number;
  /** Close on SIGTERM and SIGINT (the handlers are removed on close). Default: false. */
  closeOnSignals?: boolean;
  /** Called once close() has finished, whatever started it (e.g. to end the pool after a signal). */
  onClosed?: () => void | Promise<void>;
}

export interface RunningReceiver {
  /** Base address, e.g. http://127.0.0.1:8080 (the listening address; 0.0.0.0 shown as 127.0.0.1). */
  url: string;
  port: number;
  /** Where its metrics are registered; serve them on an admin listener (never on this public one). */
  registry: Registry;
  /**
   * Graceful shutdown: stop accepting connections, let in-flight requests commit and be answered, then
   * close every connection. Does not end `sql`, which the caller owns. Safe to call more than once.
   */
  close(): Promise<void>;
}

/** A delay that never keeps the process alive on its own (close() must not hold up exit). */
function sleep(ms: number) {
  return new Promise((resolve) => setTimeout(resolve, ms).unref());
}

/** Starts the receiver on @hono/node-server. */
export async function startReceiver({
  port = 8080,
  host = "0.0.0.0",
  shutdownTimeoutMs = 10_000,
  closeOnSignals = false,
  onClosed,
  ...appOptions
}: StartReceiverOptions): Promise<RunningReceiver> {
  const logger = appOptions.logger;
  const receiver = createReceiver(appOptions);
  const server = await new Promise<Server>((resolve, reject) => {
    const s = serve({ fetch: receiver.app.fetch, port, hostname: host }, () =>
      resolve(s as Server),
    ) as Server;
    s.once("error", reject);
  });
  answerClientErrors(server);
  // Loops waits 10 s for an answer; keep idle sockets a little longer than a typical client does.
  server.keepAliveTimeout = 65_000;
  const address = server.address() as AddressInfo;
  const shownHost = host === "0.0.0.0" || host === "::" ? "127.0.0.1" : host;
  const url = `http://${shownHost.includes(":") ? `[${shownHost}]` : shownHost}:${address.port}`;
  logger?.info({ url }, "receiver listening");

  let closing: Promise<void> | undefined;
  const onSignal = (signal: NodeJS.Signals) => {
    logger?.info({ signal }, "shutting down the receiver");
    void close();
  };
  if (closeOnSignals) {
    process.once("SIGTERM", onSignal);
    process.once("SIGINT", onSignal);
  }

  function close(): Promise<void> {
    closing ??= (async () => {
      process.off("SIGTERM", onSignal);
      process.off("SIGINT", onSignal);
      receiver.drain();
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeIdleConnections();
      const deadline = Date.now() + shutdownTimeoutMs;
      // Every request already accepted gets its commit and its answer before the sockets go. Their answers
      // carry Connection: close, so clients do not send more on them meanwhile.
      while ((receiver.inFlight() > 0 || receiver.store.batcher.queued > 0) && Date.now() < deadline) {
        await sleep(10);
      }
      await Promise.race([receiver.store.batcher.idle(), sleep(Math.max(0, deadline - Date.now()))]);
      server.closeAllConnections();
      await closed;
      logger?.info({ url }, "receiver stopped");
      await onClosed?.();
    })();
    return closing;
  }

  return { url, port: address.port, registry: receiver.metrics.registry, close };
}
