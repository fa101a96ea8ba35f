// Child process of bench/receiver.ts: serves either the real receiver or a bare Hono endpoint on a free
// port, reports its URL over IPC, and answers RSS queries, so the load generator runs in another process.
import { createRequire } from "node:module";
import { connect } from "@loops-sync/db";
import { startReceiver } from "@loops-sync/receiver";

interface BareContext {
  env?: { incoming?: AsyncIterable<Buffer> };
  req: { raw: Request };
  json(value: unknown, status?: number): Response;
}
interface BareApp {
  post(path: string, handler: (c: BareContext) => Promise<Response>): void;
  fetch(request: Request, env?: unknown): Response | Promise<Response>;
}
interface NodeServer {
  address(): { port: number } | string | null;
  close(callback?: () => void): void;
  closeAllConnections(): void;
}

// hono lives in the receiver's dependencies, not the root's: resolve it from there.
const fromReceiver = createRequire(new URL("../apps/receiver/package.json", import.meta.url));
const { Hono } = (await import(fromReceiver.resolve("hono"))) as { Hono: new () => BareApp };
const { serve } = (await import(fromReceiver.resolve("@hono/node-server"))) as {
  serve(options: { fetch: BareApp["fetch"]; port: number; hostname: string }, ready: () => void): NodeServer;
};

const [mode] = process.argv.slice(2);
// The tracing phase (measure-tracing.ts): tracing on, as OTEL_* would start it, at this sampling ratio.
if (process.env.BENCH_OTEL_ENDPOINT) {
  const { startTracing } = await import("@loops-sync/tracing");
  await startTracing({
    endpoint: process.env.BENCH_OTEL_ENDPOINT,
    protocol: "http/protobuf",
    serviceName: "loops-sync-bench-receiver",
    serviceVersion: "bench",
    sampler: "parentbased_traceidratio",
    samplerArg: Number(process.env.BENCH_OTEL_RATIO ?? 1),
  });
}
const secret = process.env.BENCH_WEBHOOK_SECRET;
if (!secret) throw new Error("receiver-server: BENCH_WEBHOOK_SECRET is not set");
let peakRss = process.memoryUsage().rss;
setInterval(() => {
  peakRss = Math.max(peakRss, process.memoryUsage().rss);
}, 50).unref();

let stop: () => Promise<void>;
let url: string;
if (mode === "bare" || mode === "bare-request") {
  const app = new Hono();
  app.post("/webhooks/loops", async (c) => {
    // As the receiver reads it: from Node's request stream, so no WHATWG Request is built for the body.
    const incoming = c.env?.incoming;
    if (mode === "bare" && incoming) for await (const _ of incoming);
    else await c.req.raw.arrayBuffer();
    return c.json({ status: "ok" }, 200);
  });
  const server = await new Promise<NodeServer>((resolve) => {
    const s = serve({ fetch: app.fetch, port: 0, hostname: "127.0.0.1" }, () => resolve(s));
  });
  url = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  stop = () =>
    new Promise((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    });
} else {
  const sql = connect(process.env.BENCH_DATABASE_URL!, { max: 10, applicationName: "loops-sync-bench" });
  // BENCH_COMMITS tries other group-commit concurrencies; unset, the receiver's default is measured.
  const commits = process.env.BENCH_COMMITS ? Number(process.env.BENCH_COMMITS) : undefined;
  const receiver = await startReceiver({
    sql,
    webhookSecrets: [secret],
    port: 0,
    host: "127.0.0.1",
    ...(commits ? { maxConcurrentCommits: commits } : {}),
    // LOOPS_APPLICATION_ID as deployed (README, the freshness phase): order events go to the order queue.
    // Unset, every event goes into the commit's process_events job.
    applicationId: process.env.BENCH_APPLICATION_ID || undefined,
  });
  url = receiver.url;
  stop = async () => {
    await receiver.close();
    await sql.end();
  };
}

process.on("message", async (message: { kind: string }) => {
  if (message.kind === "rss") {
    process.send?.({ kind: "rss", rss: process.memoryUsage().rss, peakRss, memory: process.memoryUsage() });
  } else if (message.kind === "reset-peak") {
    peakRss = process.memoryUsage().rss;
    process.send?.({ kind: "reset-peak" });
  } else if (message.kind === "stop") {
    await stop();
    process.send?.({ kind: "stopped" });
    process.exit(0);
  }
});
process.send?.({ kind: "ready", url });
