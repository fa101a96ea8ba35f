// `node bench/rush.ts [--merchants 60] [--orders-per-second 6] [--seconds 45] [--rps 25]`: a lunch rush
// against the default request budget (issue 40). A sandbox with --merchants merchants makes
// --orders-per-second new orders, each moved placed → … → delivered every 2–6 s (the generator's lifecycle,
// ≈ 30 order events/s at the defaults), delivered as signed webhooks to `loops-sync receiver`, with
// `loops-sync worker` (LOOPS_MAX_RPS=--rps) mirroring them. Prints, for the events of the rush: 2xx →
// mirrored p50/p99 (the commit that makes the version readable, a NOTIFY trigger), 2xx → feed reader p99,
// the API calls per order event, the busiest second the sandbox counted, the oldest unconfirmed row seen
// (`replica.orders.unconfirmed_since`; "n/a" on code without it) and how long after the last event the
// replica equalled upstream. Figures only: nothing here passes or fails. Issue 52 adds, each beside the steady
// rush of its own run: `--restart-at S` (a new worker S s into the rush, the old one stopped 5 s later; prints
// the background calls of its start-up), `--onboard N` (N more merchants joining as the rush starts: backfill,
// catch-up, first reconcile) and `--reconcile-due` (every merchant's reconcile due as the rush starts).
import { monitorEventLoopDelay } from "node:perf_hooks";
import { isDeepStrictEqual, parseArgs } from "node:util";
import { DEFAULT_WEBHOOK_SECRET, manyMerchantsSeed, startSandbox } from "@loops-sync/sandbox";
import { createBenchDatabase } from "./bench-database.ts";
import { describeMachine, formatLoad } from "./machine.ts";
import { percentile } from "./percentile.ts";
import {
  backgroundCalls,
  firstRunsDone,
  makeReconcilesDue,
  onboardMerchants,
  replaceWorker,
  type Sightings,
  waitForQuietQueue,
  watchVersionSightings,
} from "./rush-scenario.ts";
import { serviceEnv, startReceiverProcess, startWorkerProcess } from "./service-processes.ts";
import { readWorkerStages, stagesBetween } from "./worker-stages.ts";

const { values } = parseArgs({
  options: {
    merchants: { type: "string", default: "60" },
    "orders-per-second": { type: "string", default: "6" },
    seconds: { type: "string", default: "45" },
    rps: { type: "string", default: "25" },
    "settle-seconds": { type: "string", default: "30" },
    "restart-at": { type: "string" },
    onboard: { type: "string", default: "0" },
    "reconcile-due": { type: "boolean", default: false },
  },
});
const RESTART_AT = values["restart-at"] === undefined ? undefined : Number(values["restart-at"]);
const ONBOARD = Number(values.onboard);
const MERCHANTS = Number(values.merchants);
const RATE = Number(values["orders-per-second"]);
const SECONDS = Number(values.seconds);
const RPS = Number(values.rps);
const SETTLE_SECONDS = Number(values["settle-seconds"]);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const machine = await describeMachine();
const db = await createBenchDatabase();
const sandbox = await startSandbox({ seed: manyMerchantsSeed(MERCHANTS + ONBOARD) });
const rushing = sandbox.merchantIds.slice(0, MERCHANTS);
const env = {
  ...serviceEnv({ databaseUrl: db.url, sandbox }),
  LOOPS_MAX_RPS: String(RPS),
  LOOPS_MERCHANT_IDS: rushing.join(","),
  LOG_LEVEL: "warn",
  // The default trickle: every merchant reconciled at start, so none is due again within the rush.
  RECONCILE_CRON: "*/15 * * * *",
};
const receiver = await startReceiverProcess({ ...env, LOG_LEVEL: "info" }, DEFAULT_WEBHOOK_SECRET);
sandbox.addWebhookEndpoint({ url: `${receiver.url}/webhooks/loops`, secrets: [DEFAULT_WEBHOOK_SECRET] });
const worker = await startWorkerProcess({ ...env, LOG_LEVEL: "info" }, { concurrency: 8, poolSize: 10 });
const adminLine = await worker.process.waitForLine((l) => l.msg === "admin listening");
const metricsUrl = `${String(adminLine.url)}/metrics`;

// The start's catch-up and resource refreshes first: the rush begins on a quiet worker.
await waitForQuietQueue(db.sql, 120_000);
await sleep(2000);

const sightings = await watchVersionSightings(db.sql, () => sandbox.clock.now());
const { mirrored, read } = sightings;

let oldestUnconfirmed: number | undefined;
let unconfirmedKnown = true;
const sampler = setInterval(async () => {
  if (!unconfirmedKnown) return;
  try {
    const [row] = await db.sql<{ age: number | null }[]>`
      select extract(epoch from now() - min(unconfirmed_since))::float8 as age from replica.orders
      where unconfirmed_since is not null`;
    if (row?.age != null) oldestUnconfirmed = Math.max(oldestUnconfirmed ?? 0, row.age);
  } catch {
    unconfirmedKnown = false;
  }
}, 1000);

const startedWith = backgroundCalls(sandbox.stats().apiCalls);
if (values["reconcile-due"]) await makeReconcilesDue(db.sql);
sandbox.resetStats();
// This process (the sandbox, its deliveries and the watchers): how late its timers ran in the rush. A late
// loop delays the sightings measured here, so a p99 near it is the load generator's, not the worker's.
const loopDelay = monitorEventLoopDelay({ resolution: 10 });
loopDelay.enable();
const stagesBefore = await readWorkerStages(metricsUrl);
const rushStart = sandbox.clock.now();
sandbox.startGenerator({ ratePerSecond: RATE, advanceEveryMs: 4000, merchantIds: rushing });
if (ONBOARD > 0) await onboardMerchants(db.sql, sandbox.merchantIds.slice(MERCHANTS));
let workers = [worker];
let restartCalls: Promise<number> | undefined;
if (RESTART_AT !== undefined) {
  await sleep(RESTART_AT * 1000);
  const replaced = await replaceWorker(worker, { ...env, LOG_LEVEL: "info" }, sandbox);
  workers = [replaced.worker];
  restartCalls = replaced.startupCalls;
  await sleep(Math.max(0, SECONDS - RESTART_AT) * 1000);
} else await sleep(SECONDS * 1000);
sandbox.stopGenerator();
const rushEnd = sandbox.clock.now();
loopDelay.disable();
// The first worker's stages (a replaced one's are not read: its process has stopped).
const stages =
  RESTART_AT === undefined ? stagesBetween(stagesBefore, await readWorkerStages(metricsUrl)) : [];
const onboarded = ONBOARD > 0 ? await firstRunsDone(db.sql, sandbox.merchantIds.slice(MERCHANTS)) : undefined;
await sandbox.flushDeliveries();

const orderEvents = sandbox.truth
  .events()
  .filter((e) => e.type.startsWith("order.") && Date.parse(e.created_at) >= rushStart);
const lastEventAt = Math.max(...orderEvents.map((e) => Date.parse(e.created_at)));

// Converged: every order of the rush as the replica holds it equals upstream's.
const rushOrders = () => sandbox.truth.orders().filter((o) => Date.parse(o.created_at) >= rushStart);
let convergedAfter: number | undefined;
let differing = 0;
for (const until = performance.now() + SETTLE_SECONDS * 1000 + 5000; performance.now() < until; ) {
  const upstream = rushOrders();
  const rows = await db.sql<{ id: string; raw: unknown }[]>`
    select id, raw from replica.orders where id = any(${upstream.map((o) => o.id)}::text[])`;
  const mine = new Map(rows.map((r) => [r.id, r.raw]));
  differing = upstream.filter(
    (o) => !isDeepStrictEqual(mine.get(o.id), JSON.parse(JSON.stringify(o))),
  ).length;
  if (differing === 0) {
    convergedAfter = (sandbox.clock.now() - lastEventAt) / 1000;
    break;
  }
  await sleep(500);
}
const stats = sandbox.stats();
const calls = Object.values(stats.apiCalls).reduce((a, b) => a + b, 0);
const routes = Object.entries(stats.apiCalls)
  .sort((a, b) => b[1] - a[1])
  .map(([route, n]) => `${route} ${n}`)
  .join(", ");
clearInterval(sampler);
await sightings.close();

// 2xx → seen: per delivered order event of the rush, from its successful attempt's end to the first sighting
// of its version or newer (0 when that came first).
const ackAt = new Map<string, number>();
for (const d of sandbox.deliveries()) {
  const ok = d.attempts.find((a) => a.status !== null && a.status >= 200 && a.status < 300);
  if (ok) ackAt.set(d.event_id, Date.parse(ok.ended_at));
}
const waits = (seen: Sightings) => {
  const out: number[] = [];
  const late: number[] = [];
  for (const e of orderEvents) {
    const ack = ackAt.get(e.id);
    const orderId = String(e.data.order_id);
    const version = Number(e.data.version);
    if (ack === undefined) continue;
    const first = (seen.get(orderId) ?? []).find(([v]) => v >= version);
    const wait = first ? Math.max(0, first[1] - ack) : Number.POSITIVE_INFINITY;
    out.push(wait);
    if (ack >= rushEnd - 15_000) late.push(wait);
  }
  return { all: out, late };
};
const replica = waits(mirrored);
const feed = waits(read);
const ms = (v: number) => (Number.isFinite(v) ? `${v.toFixed(0)} ms` : "never");

await Promise.all([...workers.map((w) => w.process.stop()), receiver.process.stop()]);
await sandbox.close();
await db.drop();

console.log(
  `\nrush: ${MERCHANTS} merchants, ${RATE} new orders/s for ${SECONDS} s, LOOPS_MAX_RPS=${RPS}; ${machine.cores} cores, load ${formatLoad(machine)} (shared with other work)` +
    (RESTART_AT === undefined ? "" : `; worker replaced at ${RESTART_AT} s (5 s overlap)`) +
    (ONBOARD > 0 ? `; ${ONBOARD} merchants onboarded as it started` : "") +
    (values["reconcile-due"] ? "; every merchant's reconcile due as it started" : ""),
);
console.log(
  `start-up: first start ${startedWith} background calls` +
    (restartCalls ? `; the replacement's start ${await restartCalls} in its first 15 s` : "") +
    `; background in the rush ${backgroundCalls(stats.apiCalls)}`,
);
console.log(
  `order events ${orderEvents.length} (${(orderEvents.length / SECONDS).toFixed(1)}/s), acknowledged ${ackAt.size}`,
);
console.log(
  `2xx → mirrored p50 ${ms(percentile(replica.all, 50))}, p99 ${ms(percentile(replica.all, 99))} (last 15 s: p99 ${ms(percentile(replica.late, 99))})`,
);
console.log(`2xx → feed reader p99 ${ms(percentile(feed.all, 99))}`);
for (const s of stages)
  console.log(
    `worker ${s.stage}: n ${s.count}, mean ${s.meanMs.toFixed(1)} ms, over 100 ms ${(100 * s.over100ms).toFixed(1)} %`,
  );
console.log(
  `this process's event loop (sandbox, deliveries, watchers): delay p99 ${(loopDelay.percentile(99) / 1e6).toFixed(0)} ms, max ${(loopDelay.max / 1e6).toFixed(0)} ms`,
);
console.log(
  `calls per order event ${(calls / orderEvents.length).toFixed(2)} (${calls} API calls: ${routes}; ${stats.tokenRequests} token requests)`,
);
console.log(`busiest second ${stats.busiestSecond} / ${RPS}`);
if (onboarded) {
  console.log(
    `onboarded by the rush's end: ${onboarded.caughtUp}/${ONBOARD} first catch-ups (backfill), ${onboarded.reconciled}/${ONBOARD} first reconciles`,
  );
}
console.log(
  `oldest unconfirmed ${unconfirmedKnown ? `${(oldestUnconfirmed ?? 0).toFixed(1)} s` : "n/a (no unconfirmed_since)"}`,
);
console.log(
  convergedAfter === undefined
    ? `replica NOT equal to upstream ${SETTLE_SECONDS} s after the last event (${differing} orders differ)`
    : `replica equal to upstream ${convergedAfter.toFixed(1)} s after the last event`,
);
