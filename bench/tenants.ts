// `node bench/tenants.ts [--merchants 5000] [--rps 100] [--history 1] [--start new|synced]`: the cost of many
// merchants under one request budget. `--start synced` (the default when a first start would take past 15
// minutes of the budget, as 5,000 merchants at 25/s) skips it: the merchants are synced already, and the run
// is a quiet window, one with every merchant's catch-up and reconcile due (the trickles at their share of the
// budget, CATCHUP_CRON and RECONCILE_CRON at their defaults), and a quiet one again. It prints the calls of
// each second against the budget, background among them, live orders' freshness per window and per 10 s,
// and the trickles' configured and effective intervals (`status --json`). Otherwise, `--start new`: A sandbox seeded with --merchants merchants (--history orders each, from before the start),
// a receiver and a worker (`bin/loops-sync` children, LOOPS_MAX_RPS=--rps) and, beside them, `loops-sync
// catchup`, as an operator would run it. Measures the first start (the worker's catch-up at start, with its
// initial backfill, plus the CLI's run) and then one steady catch-up tick, each beside its floor (API calls ÷
// budget); the busiest one-second window the sandbox counted; the freshness of live orders sent during the
// start; peak worker RSS; the database size. Figures only: nothing here passes or fails.
import { parseArgs } from "node:util";
import { scheduleCatchup } from "@loops-sync/catchup";
import { DEFAULT_WEBHOOK_SECRET, manyMerchantsSeed, type Sandbox, startSandbox } from "@loops-sync/sandbox";
import { createBenchDatabase } from "./bench-database.ts";
import { readMemory, startCliProcess } from "./cli-process.ts";
import { startLiveOrderProbe } from "./live-order-probe.ts";
import { describeMachine, formatLoad } from "./machine.ts";
import { serviceEnv, startReceiverProcess, startWorkerProcess } from "./service-processes.ts";
import {
  describeTrickles,
  describeWindows,
  readStatusJson,
  routesSince,
  seedSyncedMerchants,
  setLastRuns,
  startCallMeter,
  syncForReal,
  type Window,
} from "./tenants-trickle.ts";

const { values } = parseArgs({
  options: {
    merchants: { type: "string", default: "5000" },
    rps: { type: "string", default: "100" },
    history: { type: "string" },
    "live-every-ms": { type: "string", default: "500" },
    start: { type: "string" },
    "quiet-seconds": { type: "string", default: "30" },
    "due-seconds": { type: "string", default: "60" },
  },
});
const MERCHANTS = Number(values.merchants);
const RPS = Number(values.rps);
// About 9 calls a merchant's first start (docs/scaling.md, "Sizing").
const START = values.start ?? ((MERCHANTS * 9) / RPS > 900 ? "synced" : "new");
if (START !== "new" && START !== "synced")
  throw new RangeError(`--start: expected new or synced, got ${START}`);
const HISTORY = Number(values.history ?? (START === "new" ? 1 : 0));
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const calls = (sandbox: Sandbox) => {
  const s = sandbox.stats();
  return Object.values(s.apiCalls).reduce((a, b) => a + b, 0) + s.tokenRequests;
};

/** The calls per route, most first: where the calls per merchant go. */
const routes = (sandbox: Sandbox) =>
  Object.entries({ ...sandbox.stats().apiCalls, "POST {auth_url}": sandbox.stats().tokenRequests })
    .sort((a, b) => b[1] - a[1])
    .map(([route, n]) => `${route} ${n}`)
    .join(", ");

/** Resolves when no job but a catch-up is waiting or running and no order waits for a fetch (or after 5 min). */
async function queueDrained(sql: Awaited<ReturnType<typeof createBenchDatabase>>["sql"]) {
  const until = performance.now() + 300_000;
  while (performance.now() < until) {
    const [row] = await sql<{ n: number }[]>`
      select (select count(*) from graphile_worker.jobs
               where task_identifier <> 'catchup' and attempts < max_attempts)::int
           + (select count(*) from sync.order_refresh)::int as n`;
    if (row?.n === 0) return;
    await sleep(250);
  }
}

/** Resolves when the worker's catch-up tick that started after `since` has finished. */
async function tickFinished(sql: Awaited<ReturnType<typeof createBenchDatabase>>["sql"], since: Date) {
  for (;;) {
    const [row] = await sql<{ done: boolean }[]>`
      select finished_at is not null and started_at >= ${since} as done
      from sync.scheduled_ticks where task = 'catchup'`;
    if (row?.done) return;
    await sleep(250);
  }
}

const machine = await describeMachine();
const db = await createBenchDatabase();
const sandbox = await startSandbox({ seed: manyMerchantsSeed(MERCHANTS) });
for (const merchantId of sandbox.merchantIds) {
  for (let i = 0; i < HISTORY; i++) sandbox.createOrder({ merchantId });
}
const env = {
  ...serviceEnv({ databaseUrl: db.url, sandbox }),
  LOOPS_MAX_RPS: String(RPS),
  LOG_LEVEL: "warn",
};
const receiver = await startReceiverProcess({ ...env, LOG_LEVEL: "info" }, DEFAULT_WEBHOOK_SECRET);
sandbox.addWebhookEndpoint({ url: `${receiver.url}/webhooks/loops`, secrets: [DEFAULT_WEBHOOK_SECRET] });
sandbox.resetStats();
if (START === "synced") {
  await runSynced();
  process.exit(0);
}

/** `--start synced`: quiet, every merchant's runs due, quiet again; the trickles at the default crons. */
async function runSynced(): Promise<void> {
  const trickleEnv = { ...env, CATCHUP_CRON: "*/5 * * * *", RECONCILE_CRON: "*/15 * * * *" };
  await seedSyncedMerchants(db.sql, sandbox.merchantIds);
  const worker = await startWorkerProcess(
    { ...trickleEnv, LOG_LEVEL: "info" },
    { concurrency: 8, poolSize: 10 },
  );
  // Live orders go to 50 merchants synced for real (their locations mirrored), as in a synced deployment.
  const hot = sandbox.merchantIds.slice(0, 50);
  await syncForReal(db.sql, hot);
  await sleep(2000);
  const meter = startCallMeter(sandbox);
  const probe = startLiveOrderProbe(db.sql, sandbox, {
    everyMs: Number(values["live-every-ms"]),
    merchantIds: hot,
  });
  const quietMs = Number(values["quiet-seconds"]) * 1000;
  const windows: Window[] = [];
  const during = async (name: string, ms: number) => {
    const from = performance.now();
    const before = sandbox.stats().apiCalls;
    await sleep(ms);
    windows.push({ name, from, to: performance.now(), routes: routesSince(sandbox, before) });
  };
  const loads: string[] = [formatLoad(await describeMachine())];
  await during("quiet (every merchant's runs recent)", quietMs);
  // Hours ago: past even a stretched interval, so every merchant's catch-up and reconcile is due at once.
  await setLastRuns(db.sql, "6 hours");
  sandbox.resetStats();
  await during(
    "every merchant's runs due (the trickles at their share)",
    Number(values["due-seconds"]) * 1000,
  );
  const busiest = sandbox.stats().busiestSecond;
  loads.push(formatLoad(await describeMachine()));
  const statusJson = await readStatusJson(trickleEnv);
  await setLastRuns(db.sql, "0");
  await during("quiet again", quietMs);
  loads.push(formatLoad(await describeMachine()));
  const live = await probe.stop();
  meter.stop();
  await Promise.all([worker.process.stop(), receiver.process.stop()]);
  await sandbox.close();
  await db.drop();
  console.log(
    `\n${MERCHANTS} merchants synced already, LOOPS_MAX_RPS=${RPS}, RECONCILE_BUDGET_SHARE 0.5, CATCHUP_CRON */5, RECONCILE_CRON */15; ` +
      `${machine.cores} cores, load ${loads.join(" → ")} (shared with other work)`,
  );
  for (const line of describeWindows(windows, meter, live.samples, RPS)) console.log(line);
  console.log(`busiest sliding second while due: ${busiest} / ${RPS}`);
  for (const line of describeTrickles(statusJson)) console.log(line);
  console.log(`live orders: ${live.mirrored}/${live.sent} mirrored`);
}

// First start: the worker catches up every merchant (a backfill first, each being new); the CLI runs beside.
const started = new Date();
const t0 = performance.now();
const worker = await startWorkerProcess({ ...env, LOG_LEVEL: "info" }, { concurrency: 8, poolSize: 10 });
// Live orders from the moment the worker runs (its catch-up starts then): what a webhook waits meanwhile.
const probeStarted = new Date();
const probe = startLiveOrderProbe(db.sql, sandbox, { everyMs: Number(values["live-every-ms"]) });
const cli = startCliProcess(["catchup", "--json"], env);
let peakRss = 0;
const sampler = setInterval(async () => {
  peakRss = Math.max(peakRss, (await readMemory(worker.process.pid))?.peak ?? 0);
}, 500);
await Promise.all([tickFinished(db.sql, started), cli.exited]);
// The start also refreshes every merchant's resources (jobs); the first start ends when those are done too.
await queueDrained(db.sql);
const firstSeconds = (performance.now() - t0) / 1000;
const live = await probe.stop();
console.log(
  `run started ${started.toISOString()}, worker up and live orders from ${probeStarted.toISOString()}`,
);
// A live order late by a minute is a webhook whose first attempt failed (the spec's retry is a minute on).
const retried = sandbox.deliveries().filter((d) => d.attempts.length > 1);
const firstFailures = retried.map((d) => d.attempts[0]?.error ?? String(d.attempts[0]?.status)).slice(0, 3);
const first = { calls: calls(sandbox), busiest: sandbox.stats().busiestSecond, seconds: firstSeconds };
const firstRoutes = routes(sandbox);

// A steady tick: every merchant has a cursor; nothing new but the live orders.
sandbox.resetStats();
const tickStart = new Date();
const t1 = performance.now();
await scheduleCatchup(db.sql);
await tickFinished(db.sql, tickStart);
const steady = {
  calls: calls(sandbox),
  busiest: sandbox.stats().busiestSecond,
  seconds: (performance.now() - t1) / 1000,
};
const steadyRoutes = routes(sandbox);
clearInterval(sampler);
peakRss = Math.max(peakRss, (await readMemory(worker.process.pid))?.peak ?? 0);
// Where the slowest live orders waited: stored by the receiver, then applied.
const slowest = await db.sql<{ id: string; received: Date; outcome_at: Date | null; synced: Date }[]>`
  select o.id, min(e.received_at) as received, max(e.outcome_at) as outcome_at, o.synced_at as synced
  from replica.orders o join sync.events e on e.order_id = o.id
  where o.id = any(${live.slowest}) group by o.id, o.synced_at`;
const [size] = await db.sql<{ bytes: string }[]>`select pg_database_size(current_database())::text as bytes`;
const statusStart = performance.now();
const status = startCliProcess(["status", "--json"], env);
await status.exited;
const statusSeconds = (performance.now() - statusStart) / 1000;

await Promise.all([worker.process.stop(), receiver.process.stop()]);
await sandbox.close();
await db.drop();

const row = (name: string, f: typeof first) =>
  `| ${name} | ${f.seconds.toFixed(1)} s | ${(f.calls / RPS).toFixed(1)} s | ${(f.seconds / (f.calls / RPS)).toFixed(2)} | ${f.calls} | ${(f.calls / MERCHANTS).toFixed(2)} | ${f.busiest} / ${RPS} |`;
console.log(
  `\n${MERCHANTS} merchants, LOOPS_MAX_RPS=${RPS}, ${HISTORY} order(s) of history each; ${machine.cores} cores, load ${formatLoad(machine)} (shared with other work)`,
);
console.log(
  "| run | wall time | floor (calls ÷ budget) | wall ÷ floor | API calls | calls per merchant | busiest second |",
);
console.log("|---|---|---|---|---|---|---|");
console.log(row("first start (worker catch-up + `loops-sync catchup`)", first));
console.log(row("steady catch-up tick", steady));
console.log(`first start calls: ${firstRoutes}`);
console.log(`steady tick calls: ${steadyRoutes}`);
console.log(
  `live orders during the start: ${live.mirrored}/${live.sent} mirrored, freshness p50 ${(live.p50Ms / 1000).toFixed(1)} s, p99 ${(live.p99Ms / 1000).toFixed(1)} s, max ${(live.maxMs / 1000).toFixed(1)} s`,
);
for (const o of slowest) {
  console.log(
    `slow live order ${o.id}: stored ${o.received.toISOString()}, settled ${o.outcome_at?.toISOString()}, mirrored ${o.synced.toISOString()}`,
  );
}
console.log(
  `webhook deliveries retried: ${retried.length} (first attempts: ${firstFailures.join("; ") || "-"})`,
);
console.log(
  `worker peak RSS ${(peakRss / 2 ** 20).toFixed(0)} MB; database ${(Number(size?.bytes ?? 0) / 2 ** 20).toFixed(0)} MB; \`status --json\` answered in ${statusSeconds.toFixed(1)} s (exit ${await status.exited})`,
);
