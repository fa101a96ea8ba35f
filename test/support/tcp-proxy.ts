import { createConnection, createServer, type Server, type Socket } from "node:net";

export interface TcpProxy {
  /** The port clients connect to (stays the same across cut and restore). */
  port: number;
  /** Stops listening and drops every open connection, as a Postgres that went away. */
  cut(): Promise<void>;
  /** Listens again on the same port (nothing when it listens already). */
  restore(): Promise<void>;
  close(): Promise<void>;
}

/** A loopback TCP proxy to `target` that a test can cut and restore: a network or server outage for real. */
export async function startTcpProxy(target: { host: string; port: number }): Promise<TcpProxy> {
  const sockets = new Set<Socket>();
  let server: Server | undefined;
  let port = 0;
  const listen = () =>
    new Promise<void>((resolve, reject) => {
      if (server) return resolve();
      server = createServer((client) => {
        const upstream = createConnection(target);
        for (const s of [client, upstream]) {
          sockets.add(s);
          s.once("close", () => sockets.delete(s));
          s.on("error", () => {
            client.destroy();
            upstream.destroy();
          });
        }
        client.pipe(upstream).pipe(client);
      });
      server.once("error", reject);
      server.listen(port, "127.0.0.1", () => {
        port = (server!.address() as { port: number }).port;
        resolve();
      });
    });
  const cut = async () => {
    const closed = new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
    for (const s of sockets) s.destroy();
    await closed;
    server = undefined;
  };
  await listen();
  return { port, cut, restore: listen, close: cut };
}
