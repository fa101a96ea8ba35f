// Receiver benchmark: `DATABASE_URL=postgres://… node bench/receiver.ts [--duration 10] [--connections 100]`.
// In one run, with the same load generator (autocannon) and the same signed, distinct events (signed before
// each timed run, so the generator's HMAC does not bound the bare endpoint), measures a
// bare Hono endpoint and the receiver (verified, stored and enqueued in a real Postgres), then the
// receiver at a fixed 2,000 req/s, and prints req/s, p50/p99 ack latency, the ratio and receiver RSS.
import { type ChildProcess, fork } from "node:child_process";
import { randomBytes } from "node:crypto";
import os from "node:os";
import { parseArgs } from "node:util";
import { connect, migrate } from "@loops-sync/db";
import { PRODUCT_NODE_FLAGS } from "./cli-process.ts";
import { type LoadResult, runLoad } from "./run-load.ts";
import { createWebhookSigner } from "./webhook-signer.ts";

const { values } = parseArgs({
  options: {
    duration: { type: "string", default: "10" },
    connections: { type: "string", default: "100" },
    rate: { type: "string", default: "2000" },
  },
});
const duration = Number(values.duration);
const connections = Number(values.connections);
const fixedRate = Number(values.rate);
const serverUrl = process.env.DATABASE_URL;
if (!serverUrl) {
  console.error("set DATABASE_URL to a Postgres server (a scratch database is created on it and dropped)");
  process.exit(2);
}

const signer = createWebhookSigner();
const secret = signer.secret;
const run = randomBytes(4).toString("hex");

function withDatabase(url: string, database: string): string {
  const u = new URL(url);
  u.pathname = `/${database}`;
  return u.toString();
}

interface Server {
  child: ChildProcess;
  url: string;
  ask<T>(kind: string): Promise<T>;
}

async function startServer(mode: "bare" | "receiver", databaseUrl: string): Promise<Server> {
  const child = fork(new URL("./receiver-server.ts", import.meta.url), [mode], {
    env: {
      ...process.env,
      BENCH_DATABASE_URL: databaseUrl,
      // The secret by environment, as the product takes it: a command line is visible to every user.
      BENCH_WEBHOOK_SECRET: secret,
      // LOOPS_APPLICATION_ID as deployed (README, bench/run.ts): order events go to the order queue.
      BENCH_APPLICATION_ID: "app_bench_receiver",
      // The receiver runs with the flags bin/loops-sync gives every loops-sync process;
      // BENCH_RECEIVER_NODE_OPTIONS replaces them (e.g. --cpu-prof, other heap sizes).
      ...(mode === "receiver"
        ? { NODE_OPTIONS: process.env.BENCH_RECEIVER_NODE_OPTIONS ?? PRODUCT_NODE_FLAGS.join(" ") }
        : {}),
    },
    stdio: ["ignore", "inherit", "inherit", "ipc"],
  });
  // The child answers "stop" with "stopped" and every other request with its own kind.
  const ask = <T>(kind: string) =>
    new Promise<T>((resolve, reject) => {
      const reply = kind === "stop" ? "stopped" : kind;
      const onMessage = (m: { kind: string }) => {
        if (m.kind !== reply) return;
        child.off("message", onMessage);
        child.off("exit", onExit);
        resolve(m as T);
      };
      const onExit = (code: number | null) => reject(new Error(`receiver-server exited with ${code}`));
      child.on("message", onMessage);
      child.once("exit", onExit);
      if (kind !== "ready") child.send({ kind });
    });
  const { url } = await ask<{ url: string }>("ready");
  return { child, url, ask };
}

/** Closed-loop (or paced) load of distinct order events, every one signed before the timed run. */
async function load(url: string, seconds: number, overallRate?: number, conns = connections) {
  return await runLoad({ url, signer, seconds, connections: conns, overallRate });
}

const mb = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(0)} MB`;
const row = (name: string, r: LoadResult) =>
  `${name.padEnd(34)} ${r.perSecond.toFixed(0).padStart(8)} req/s   p50 ${String(r.p50).padStart(4)} ms   p99 ${String(r.p99).padStart(4)} ms   2xx ${r.ok}  non-2xx ${r.notOk}  errors ${r.errors}` +
  (r.signedDuringRun > 0
    ? `  (${r.signedDuringRun} signed during the run: raise BENCH_PRESIGNED_PER_SECOND)`
    : "");

const admin = connect(serverUrl, { max: 1, applicationName: "loops-sync-bench" });
const database = `loops_sync_bench_${run}`;
await admin.unsafe(`create database ${database}`);
const databaseUrl = withDatabase(serverUrl, database);
const sql = connect(databaseUrl, { max: 2 });
try {
  await migrate(sql, databaseUrl);
  const [pg] = await sql<{ version: string; sync: string; fsync: string }[]>`
    select current_setting('server_version') as version, current_setting('synchronous_commit') as sync,
           current_setting('fsync') as fsync`;
  console.log(
    `machine: ${os.cpus().length} cores (${os.cpus()[0]?.model.trim()}), ${mb(os.totalmem())} RAM, Node ${process.version}, ` +
      `PostgreSQL ${pg!.version} (synchronous_commit=${pg!.sync}, fsync=${pg!.fsync}); ${connections} connections, ${duration} s per run; load average before the run ${os.loadavg()[0]!.toFixed(1)} (other work on the machine skews every figure)`,
  );

  const bare = await startServer("bare", databaseUrl);
  await load(bare.url, 2);
  const bareResult = await load(bare.url, duration);
  const bareMemory = await bare.ask<{ peakRss: number }>("rss");
  await bare.ask("stop");
  console.log(row("bare Hono endpoint", bareResult));

  const receiver = await startServer("receiver", databaseUrl);
  const idle = await receiver.ask<{ rss: number }>("rss");
  const warm = await load(receiver.url, 2);
  await receiver.ask("reset-peak");
  const maxResult = await load(receiver.url, duration);
  console.log(row("receiver (verify+store+enqueue)", maxResult));
  const rateResult = await load(receiver.url, duration, fixedRate, 50);
  console.log(row(`receiver at fixed ${fixedRate}/s`, rateResult));
  const { rss, peakRss } = await receiver.ask<{ rss: number; peakRss: number }>("rss");
  await receiver.ask("stop");

  const acknowledged = warm.ok + maxResult.ok + rateResult.ok;
  const [counts] = await sql<{ events: number; enqueued: number; jobs: number }[]>`
    select (select count(*)::int from sync.events) as events,
           (select coalesce(sum(jsonb_array_length(payload::jsonb -> 'eventIds')), 0)::int
              from graphile_worker._private_jobs)
           + (select count(*)::int from sync.order_refresh) as enqueued,
           (select count(*)::int from graphile_worker._private_jobs) as jobs`;
  console.log(
    `ratio receiver/bare: ${(maxResult.perSecond / bareResult.perSecond).toFixed(2)}; ` +
      `receiver RSS ${mb(idle.rss)} idle at start, peak ${mb(peakRss)} under load, ${mb(rss)} after ` +
      `(bare Hono peak ${mb(bareMemory.peakRss)})`,
  );
  console.log(
    `check: ${acknowledged} acknowledged, ${counts!.events} rows in sync.events, ${counts!.enqueued} handed to the worker (${counts!.jobs} process_events jobs, the rest order refresh rows)` +
      // Requests still in flight when a run's time is up are stored but never counted as 2xx by autocannon.
      (counts!.events >= acknowledged && counts!.enqueued === counts!.events
        ? " (every 2xx stored, every stored event enqueued)"
        : " (MISMATCH)"),
  );
} finally {
  await sql.end();
  await admin.unsafe(`drop database if exists ${database} with (force)`);
  await admin.end();
}
