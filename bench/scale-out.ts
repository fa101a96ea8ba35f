// `node bench/scale-out.ts [--quick] [--api-ms 20] [--topologies 1x1,2x3]`: one receiver + one worker against
// two receivers + three workers (or any receivers x workers list),
// each a `bin/loops-sync` child process on one fresh database, the sandbox answering every API call after a
// fixed delay. Prints webhooks/s accepted, orders/s applied to the replica, their ratio, and whether the
// replica equals the sandbox truth after each phase. Figures only: nothing here passes or fails.
import { randomBytes } from "node:crypto";
import { readFile } from "node:fs/promises";
import { Agent, request } from "node:http";
import { parseArgs } from "node:util";
import { type Sandbox, startSandbox } from "@loops-sync/sandbox";
import { signWebhook } from "@loops-sync/webhooks";
import { compareReplicaWithTruth } from "#testkit/compare-replica";
import { freePort } from "#testkit/free-port";
import { loopsApiEnv, ProcessGroup } from "#testkit/processes";
import { type BenchDatabase, createBenchDatabase } from "./bench-database.ts";
import { describeMachine, formatLoad } from "./machine.ts";

const { values } = parseArgs({
  options: {
    quick: { type: "boolean", default: false },
    orders: { type: "string" },
    versions: { type: "string", default: "3" },
    "worker-concurrency": { type: "string", default: "8" },
    "api-ms": { type: "string", default: "20" },
    connections: { type: "string", default: "64" },
    /** Receivers x workers of each phase, in order; the ratio is the last over the first. */
    topologies: { type: "string", default: "1x1,2x3" },
  },
});
const ORDERS = Number(values.orders ?? (values.quick ? 1000 : 4000));
/** Webhooks per order: order.created, then one order.status_changed per further version. */
const VERSIONS = Number(values.versions);
const CONCURRENCY = Number(values["worker-concurrency"]);
const API_MS = Number(values["api-ms"]);
const CONNECTIONS = Number(values.connections);
const TOPOLOGIES = values.topologies.split(",").map((t) => {
  const [receivers = 0, workers = 0] = t.split("x").map(Number);
  if (!(receivers >= 1 && workers >= 1)) throw new Error(`--topologies: "${t}" is not RxW, e.g. 2x3`);
  return { receivers, workers };
});
const APPLY_TIMEOUT_MS = 180_000;
/** Every order this run made; the replica must hold exactly these, as the sandbox has them. */
const madeIds = new Set<string>();
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface PhaseFigures {
  name: string;
  orders: number;
  webhooks: number;
  acceptPerSecond: number;
  refused: number;
  appliedPerSecond: number;
  /** GET /orders/{id} per order: below the versions sent means coalescing, 1 is the floor. */
  fetchesPerOrder: number;
  /**
   * CPU seconds used during the measured load. "postgres": this database's backends (local server only);
   * "bench": this process (sandbox, load generator, polls).
   */
  cpuSeconds: { receivers: number; workers: number; postgres: number; bench: number };
  /** Seconds from the first webhook sent to the last order applied. */
  seconds: number;
  /** "exact", or the differences from the sandbox truth. */
  replica: string;
}

/** utime + stime of a process, in seconds (fields 14 and 15 of /proc/<pid>/stat, in clock ticks of 10 ms). */
async function cpuSeconds(pid: number): Promise<number> {
  const stat = await readFile(`/proc/${pid}/stat`, "utf8").catch(() => "");
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return (Number(fields[11] ?? 0) + Number(fields[12] ?? 0)) / 100;
}

/** CPU seconds of each Postgres backend serving this database now, by pid (the pools keep them open). */
async function backendCpu(db: BenchDatabase): Promise<Map<number, number>> {
  const rows = await db.sql<{ pid: number }[]>`
    select pid from pg_stat_activity where datname = current_database()`;
  return new Map(await Promise.all(rows.map(async (r) => [r.pid, await cpuSeconds(r.pid)] as const)));
}

async function waitHttpOk(url: string, what: string): Promise<void> {
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    const ok = await fetch(url).then(
      (r) => r.ok,
      () => false,
    );
    if (ok) return;
    await sleep(100);
  }
  throw new Error(`${what} did not answer ${url} with 2xx within 60 s`);
}

/** Orders with VERSIONS versions each, made in the sandbox, and their events signed as Loops would send them. */
function makeWebhooks(sandbox: Sandbox, count: number, secret: string) {
  const ids = new Set<string>();
  for (let i = 0; i < count; i++) {
    ids.add(sandbox.createOrder({ merchantId: sandbox.merchantIds[i % sandbox.merchantIds.length]! }).id);
  }
  for (const id of ids) madeIds.add(id);
  for (let v = 1; v < VERSIONS; v++) for (const id of ids) sandbox.advanceOrder(id);
  const timestamp = new Date();
  const webhooks = sandbox.truth
    .events()
    .filter((e) => ids.has(String(e.data.order_id)))
    .map((e) => {
      const body = JSON.stringify(e);
      const headers = signWebhook({ id: e.id, timestamp, body, secrets: [secret] });
      return { body, headers: { ...headers, "content-type": "application/json" } };
    });
  return { ids: [...ids], webhooks };
}

/** Closed loop: CONNECTIONS requests in flight, spread round-robin over the receivers; refusals are retried. */
async function deliver(
  receiverUrls: string[],
  webhooks: { body: string; headers: Record<string, string> }[],
) {
  const agents = receiverUrls.map(() => new Agent({ keepAlive: true, maxSockets: CONNECTIONS }));
  let next = 0;
  let refused = 0;
  const post = (i: number) =>
    new Promise<number>((resolve) => {
      const r = i % receiverUrls.length;
      const w = webhooks[i]!;
      const req = request(
        `${receiverUrls[r]}/webhooks/loops`,
        { method: "POST", agent: agents[r], headers: w.headers },
        (res) => res.resume().on("end", () => resolve(res.statusCode ?? 0)),
      );
      req.on("error", () => resolve(0));
      req.end(w.body);
    });
  const lane = async () => {
    for (let i = next++; i < webhooks.length; i = next++) {
      // A refusal is retried as Loops would, so every phase ends with every event stored.
      for (let attempt = 1; ; attempt++) {
        const status = await post(i);
        if (status >= 200 && status < 300) break;
        refused++;
        if (attempt >= 20) throw new Error(`webhook ${i} refused 20 times (last status ${status})`);
        await sleep(50 * attempt);
      }
    }
  };
  await Promise.all(Array.from({ length: CONNECTIONS }, lane));
  for (const a of agents) a.destroy();
  return { refused };
}

async function runPhase(
  name: string,
  topology: { receivers: number; workers: number },
  { db, sandbox, procs }: { db: BenchDatabase; sandbox: Sandbox; procs: ProcessGroup },
): Promise<PhaseFigures> {
  const secret = `whsec_${randomBytes(24).toString("base64")}`;
  const env = {
    DATABASE_URL: db.url,
    ...loopsApiEnv(sandbox),
    LOOPS_WEBHOOK_SECRETS: secret,
    HOST: "127.0.0.1",
    WORKER_CONCURRENCY: String(CONCURRENCY),
    LOOPS_SYNC_MIGRATE_ON_START: "false",
    LOG_LEVEL: "warn",
    // The scheduled catch-up would add GET /events calls in the middle of a measurement.
    CATCHUP_CRON: "0 0 1 1 *",
  };
  const receiverUrls: string[] = [];
  const started = [];
  for (let n = 1; n <= topology.receivers; n++) {
    const port = await freePort();
    const p = procs.spawn({
      name: `scale-out-${name}-receiver-${n}`,
      args: ["receiver"],
      // Any free admin port: the receivers share this machine.
      env: { ...env, PORT: String(port), ADMIN_PORT: "0" },
    });
    receiverUrls.push(`http://127.0.0.1:${port}`);
    started.push({ p, kind: "receivers" as const, ready: `http://127.0.0.1:${port}/readyz` });
  }
  for (let n = 1; n <= topology.workers; n++) {
    const port = await freePort();
    const p = procs.spawn({
      name: `scale-out-${name}-worker-${n}`,
      args: ["worker"],
      env: { ...env, ADMIN_PORT: String(port) },
    });
    started.push({ p, kind: "workers" as const, ready: `http://127.0.0.1:${port}/healthz` });
  }
  await Promise.all(started.map((s) => waitHttpOk(s.ready, s.p.name)));
  // Warm-up (tokens, merchant and location refreshes, JIT), then an idle queue before the clock starts.
  const warm = makeWebhooks(sandbox, 40, secret);
  await deliver(receiverUrls, warm.webhooks);
  await waitForVersions(db, sandbox, warm.ids, 60_000);
  await waitQueueIdle(db);

  const { ids, webhooks } = makeWebhooks(sandbox, ORDERS, secret);
  const fetchesBefore = sandbox.stats().apiCalls["GET /orders/{order_id}"] ?? 0;
  const cpuBefore = await Promise.all(started.map((s) => cpuSeconds(s.p.pid)));
  const benchCpuBefore = process.cpuUsage();
  const postgresBefore = await backendCpu(db);
  const t0 = performance.now();
  const applied = waitForVersions(db, sandbox, ids, APPLY_TIMEOUT_MS).then(() => performance.now());
  const { refused } = await deliver(receiverUrls, webhooks);
  const acceptedAt = performance.now();
  const appliedAt = await applied.catch(() => Number.NaN);
  const cpuAfter = await Promise.all(started.map((s) => cpuSeconds(s.p.pid)));
  const benchCpu = process.cpuUsage(benchCpuBefore);
  let postgres = 0;
  for (const [pid, after] of await backendCpu(db)) postgres += after - (postgresBefore.get(pid) ?? 0);
  const cpu = { receivers: 0, workers: 0, postgres, bench: (benchCpu.user + benchCpu.system) / 1e6 };
  started.forEach((s, i) => {
    cpu[s.kind] += (cpuAfter[i] ?? 0) - (cpuBefore[i] ?? 0);
  });
  const fetches = (sandbox.stats().apiCalls["GET /orders/{order_id}"] ?? 0) - fetchesBefore;
  const truth = sandbox.truth.orders().filter((o) => madeIds.has(o.id));
  const problems = await compareReplicaWithTruth(db.sql, truth);
  await Promise.all(started.map((s) => s.p.kill("SIGTERM")));
  return {
    name,
    orders: ids.length,
    webhooks: webhooks.length,
    acceptPerSecond: webhooks.length / ((acceptedAt - t0) / 1000),
    refused,
    appliedPerSecond: ids.length / ((appliedAt - t0) / 1000),
    fetchesPerOrder: fetches / ids.length,
    cpuSeconds: cpu,
    seconds: (appliedAt - t0) / 1000,
    replica:
      problems.length === 0
        ? `exact (${truth.length} orders)`
        : `${problems.length} differences: ${problems.slice(0, 5).join("; ")}`,
  };
}

/** Resolves once every order in `ids` has reached its sandbox version in the replica. */
async function waitForVersions(db: BenchDatabase, sandbox: Sandbox, ids: string[], timeoutMs: number) {
  // Only the orders still behind are asked about again, so the poll's own cost shrinks as they apply.
  const behind = new Map(ids.map((id) => [id, sandbox.truth.order(id)?.version ?? 0]));
  const deadline = performance.now() + timeoutMs;
  while (behind.size > 0) {
    if (performance.now() > deadline) throw new Error(`${behind.size} orders behind after ${timeoutMs} ms`);
    await sleep(100);
    const done = await db.sql<{ id: string }[]>`
      select t.id from unnest(${[...behind.keys()]}::text[], ${[...behind.values()]}::bigint[]) as t(id, version)
      join replica.orders o on o.id = t.id and o.version >= t.version`;
    for (const { id } of done) behind.delete(id);
  }
}

async function waitQueueIdle(db: BenchDatabase): Promise<void> {
  for (let i = 0; i < 600; i++) {
    const [row] = await db.sql<{ n: string }[]>`select count(*) as n from graphile_worker.jobs`;
    if (Number(row?.n) === 0) return;
    await sleep(100);
  }
}

const before = await describeMachine();
const db = await createBenchDatabase();
const sandbox = await startSandbox({ faults: { apiSlowRate: 1, apiSlowMs: API_MS } });
const procs = new ProcessGroup();
const phases: PhaseFigures[] = [];
try {
  const ctx = { db, sandbox, procs };
  for (const t of TOPOLOGIES) phases.push(await runPhase(`${t.receivers}x${t.workers}`, t, ctx));
} finally {
  await procs.killAll();
  await sandbox.close();
  await db.drop();
}
const after = await describeMachine();

const a = phases[0]!;
const b = phases.at(-1)!;
const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? "" : "s"}`;
const f = (v: number, d = 0) =>
  Number.isFinite(v) ? v.toLocaleString("en-US", { maximumFractionDigits: d }) : "timed out";
console.log(
  `\nscale-out, ${before.date}: ${ORDERS} orders × ${VERSIONS} versions = ${a.webhooks} webhooks per phase, ` +
    `API ${API_MS} ms per call, WORKER_CONCURRENCY ${CONCURRENCY}, ${CONNECTIONS} connections`,
);
console.log(
  `machine: ${before.cores} cores (${before.cpuModel}), Node ${before.node}; load ${formatLoad(before)} before, ` +
    `${formatLoad(after)} after; PostgreSQL ${db.server.version}${db.embedded ? " (embedded)" : ""}, ` +
    `synchronous_commit ${db.server.synchronousCommit}, fsync ${db.server.fsync}\n`,
);
console.log(
  "| topology | webhooks/s accepted | orders/s applied | GET /orders per order | CPU s receivers / workers / Postgres / bench | replica |",
);
console.log("|---|---|---|---|---|---|");
for (const [i, p] of phases.entries()) {
  const t = TOPOLOGIES[i]!;
  const label = `${plural(t.receivers, "receiver")} + ${plural(t.workers, "worker")}`;
  const refused = p.refused ? ` (${p.refused} refused, retried)` : "";
  const parts = [p.cpuSeconds.receivers, p.cpuSeconds.workers, p.cpuSeconds.postgres, p.cpuSeconds.bench];
  const perOrder = (parts.reduce((x, y) => x + y, 0) * 1000) / p.orders;
  const cpu = `${parts.map((c) => f(c, 1)).join(" / ")} (${f(perOrder, 1)} ms per order)`;
  console.log(
    `| ${label} | ${f(p.acceptPerSecond)}${refused} | ${f(p.appliedPerSecond)} (all in ${f(p.seconds, 1)} s) | ` +
      `${f(p.fetchesPerOrder, 2)} | ${cpu} | ${p.replica} |`,
  );
}
const ratio = (x: number, y: number) => `${f(x / y, 2)}×`;
console.log(
  `| ratio ${b.name} / ${a.name} | ${ratio(b.acceptPerSecond, a.acceptPerSecond)} | ${ratio(b.appliedPerSecond, a.appliedPerSecond)} | | | |`,
);
