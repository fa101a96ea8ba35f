// Receiver ack latency with and without a concurrent prune:
// `DATABASE_URL=postgres://… node bench/prune-ack.ts [--rows 1000000] [--duration 30] [--rate 500]`.
// Seeds a scratch database's sync.events with `rows` old events (most in a final outcome), starts the real
// `loops-sync receiver`, sends signed webhooks at a fixed rate (autocannon) for `duration` seconds, then
// again while `loops-sync prune` deletes the old events, and prints p50/p99/max ack latency of both runs.
import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { createRequire } from "node:module";
import os from "node:os";
import { parseArgs } from "node:util";
import { connect, migrate } from "@loops-sync/db";
import { startCliProcess } from "./cli-process.ts";
import { createWebhookSigner } from "./webhook-signer.ts";

interface AutocannonRequest {
  method?: string;
  path?: string;
  headers?: Record<string, string>;
  body?: string;
}
interface AutocannonResult {
  requests: { average: number; total: number };
  latency: { p50: number; p99: number; max: number };
  "2xx": number;
  non2xx: number;
  errors: number;
}
type Autocannon = (options: {
  url: string;
  connections: number;
  duration: number;
  overallRate: number;
  requests: { method: string; path: string; setupRequest: (r: AutocannonRequest) => AutocannonRequest }[];
}) => Promise<AutocannonResult>;
const autocannon = createRequire(import.meta.url)("autocannon") as Autocannon;

const { values } = parseArgs({
  options: {
    rows: { type: "string", default: "1000000" },
    duration: { type: "string", default: "30" },
    rate: { type: "string", default: "500" },
    connections: { type: "string", default: "20" },
  },
});
const rows = Number(values.rows);
const duration = Number(values.duration);
const rate = Number(values.rate);
const connections = Number(values.connections);
const serverUrl = process.env.DATABASE_URL;
if (!serverUrl) {
  console.error("set DATABASE_URL to a Postgres server (a scratch database is created on it and dropped)");
  process.exit(2);
}

const run = randomBytes(4).toString("hex");
const signer = createWebhookSigner();
let sequence = 0;
function signedRequest(request: AutocannonRequest): AutocannonRequest {
  sequence++;
  const signed = signer.sign({
    id: `evt_prune_bench_${run}_${sequence}`,
    type: "order.status_changed",
    merchantId: `mer_bench_${sequence % 20}`,
    locationId: "loc_bench",
    orderId: `ord_${sequence}`,
    status: "accepted",
    version: 2,
  });
  // Mutated in place: autocannon keeps internal state on this object.
  request.headers = signed.headers;
  request.body = signed.body;
  return request;
}

const load = (url: string, seconds: number) =>
  autocannon({
    url,
    connections,
    duration: seconds,
    overallRate: rate,
    requests: [{ method: "POST", path: "/webhooks/loops", setupRequest: signedRequest }],
  });

/** `loops-sync prune --json` as its own process; resolves with its summary and how long it ran. */
function prune(env: Record<string, string>): Promise<{ seconds: number; summary: Record<string, unknown> }> {
  const started = performance.now();
  const child = spawn(
    process.execPath,
    [new URL("../apps/cli/src/main.ts", import.meta.url).pathname, "prune", "--json"],
    {
      env: { ...process.env, ...env },
      stdio: ["ignore", "pipe", "inherit"],
    },
  );
  let out = "";
  child.stdout.on("data", (chunk: Buffer) => (out += chunk.toString("utf8")));
  return new Promise((resolve, reject) => {
    child.once("exit", (code) => {
      if (code !== 0) reject(new Error(`loops-sync prune exited with ${code}`));
      else resolve({ seconds: (performance.now() - started) / 1000, summary: JSON.parse(out) });
    });
  });
}

const row = (name: string, r: AutocannonResult) =>
  `${name.padEnd(28)} ${r.requests.average.toFixed(0).padStart(6)} req/s   p50 ${String(r.latency.p50).padStart(4)} ms   p99 ${String(r.latency.p99).padStart(4)} ms   max ${String(r.latency.max).padStart(5)} ms   2xx ${r["2xx"]}  non-2xx ${r.non2xx}  errors ${r.errors}`;

const admin = connect(serverUrl, { max: 1, applicationName: "loops-sync-bench" });
const database = `loops_sync_bench_prune_${run}`;
await admin.unsafe(`create database ${database}`);
const url = new URL(serverUrl);
url.pathname = `/${database}`;
const databaseUrl = url.toString();
const sql = connect(databaseUrl, { max: 2 });
let receiver: ReturnType<typeof startCliProcess> | undefined;
try {
  await migrate(sql, databaseUrl);
  // Old events (40–100 days) cycling through the outcomes: 8 in 10 final (prunable), 2 in 10 open.
  await sql`
    insert into sync.events (id, type, merchant_id, created_at, received_at, source, payload, outcome)
    select 'evt_old_' || i, 'order.status_changed', 'mer_bench_' || (i % 20), t, t, 'catchup',
           jsonb_build_object('data', jsonb_build_object('order_id', 'ord_old_' || i, 'version', 1)),
           (array['applied','stale','ignored_self','unhandled','skipped_revoked','pending','failed',
                  'applied','applied','applied'])[1 + i % 10]
    from generate_series(1, ${rows}) as i,
         lateral (select now() - interval '40 days' - (i % 5184000) * interval '1 second' as t) x`;
  await sql`vacuum analyze sync.events`;
  console.log(
    `machine: ${os.cpus().length} cores, load average ${os.loadavg()[0]!.toFixed(1)} before the run; ` +
      `${rows} old events seeded; ${rate} webhooks/s over ${connections} connections, ${duration} s per run`,
  );

  const env = { DATABASE_URL: databaseUrl, HOST: "127.0.0.1", LOG_LEVEL: "warn" };
  receiver = startCliProcess(["receiver"], {
    ...env,
    LOG_LEVEL: "info",
    PORT: "0",
    LOOPS_WEBHOOK_SECRETS: signer.secret,
    STATUS_PAGE: "false",
  });
  const listening = await receiver.waitForLine((l) => l.msg === "receiver listening");
  const receiverUrl = String(listening.url);
  await load(receiverUrl, 2);

  const quiet = await load(receiverUrl, duration);
  console.log(row("receiver, no prune", quiet));
  const pruning = prune(env);
  const busy = await load(receiverUrl, duration);
  const pruned = await pruning;
  console.log(row("receiver during prune", busy));
  console.log(
    `prune: ${JSON.stringify(pruned.summary)} in ${pruned.seconds.toFixed(1)} s` +
      (pruned.seconds < duration
        ? ` (finished before the run: only the first ${pruned.seconds.toFixed(0)} s of it overlapped)`
        : ""),
  );
  console.log(
    `p99 during prune / without: ${(busy.latency.p99 / Math.max(quiet.latency.p99, 1)).toFixed(2)}`,
  );
} finally {
  await receiver?.stop();
  await sql.end();
  await admin.unsafe(`drop database if exists ${database} with (force)`);
  await admin.end();
}
