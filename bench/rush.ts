// `node bench/rush.ts [--merchants 60] [--orders-per-second 6] [--seconds 45] [--rps 25]`: a lunch rush
// against the default request budget (issue 40). A sandbox with --merchants merchants makes
// --orders-per-second new orders, each moved placed → … → delivered every 2–6 s (the generator's lifecycle,
// ≈ 30 order events/s at the defaults), delivered as signed webhooks to `loops-sync receiver`, with
// `loops-sync worker` (LOOPS_MAX_RPS=--rps) mirroring them. Prints, for the events of the rush: 2xx →
// mirrored p50/p99 (the commit that makes the version readable, a NOTIFY trigger), 2xx → feed reader p99,
// the API calls per order event, the busiest second the sandbox counted, the oldest unconfirmed row seen
// (`replica.orders.unconfirmed_since`; "n/a" on code without it) and how long after the last event the
// replica equalled upstream. Figures only: nothing here passes or fails.
import { isDeepStrictEqual, parseArgs } from "node:util";
import { DEFAULT_WEBHOOK_SECRET, manyMerchantsSeed, startSandbox } from "@loops-sync/sandbox";
import { createBenchDatabase } from "./bench-database.ts";
import { describeMachine, formatLoad } from "./machine.ts";
import { percentile } from "./percentile.ts";
import { serviceEnv, startReceiverProcess, startWorkerProcess } from "./service-processes.ts";
import { watchFeedVersions } from "./watch-feed-versions.ts";
import { watchReplicaVersions } from "./watch-replica-versions.ts";

const { values } = parseArgs({
  options: {
    merchants: { type: "string", default: "60" },
    "orders-per-second": { type: "string", default: "6" },
    seconds: { type: "string", default: "45" },
    rps: { type: "string", default: "25" },
    "settle-seconds": { type: "string", default: "30" },
  },
});
const MERCHANTS = Number(values.merchants);
const RATE = Number(values["orders-per-second"]);
const SECONDS = Number(values.seconds);
const RPS = Number(values.rps);
const SETTLE_SECONDS = Number(values["settle-seconds"]);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const machine = await describeMachine();
const db = await createBenchDatabase();
const sandbox = await startSandbox({ seed: manyMerchantsSeed(MERCHANTS) });
const env = {
  ...serviceEnv({ databaseUrl: db.url, sandbox }),
  LOOPS_MAX_RPS: String(RPS),
  LOG_LEVEL: "warn",
  // The rush is measured alone: no reconcile tick in the middle of it.
  RECONCILE_CRON: "0 0 1 1 *",
};
const receiver = await startReceiverProcess({ ...env, LOG_LEVEL: "info" }, DEFAULT_WEBHOOK_SECRET);
sandbox.addWebhookEndpoint({ url: `${receiver.url}/webhooks/loops`, secrets: [DEFAULT_WEBHOOK_SECRET] });
const worker = await startWorkerProcess({ ...env, LOG_LEVEL: "info" }, { concurrency: 8, poolSize: 10 });

// The start's catch-up and resource refreshes first: the rush begins on a quiet worker.
for (const until = performance.now() + 120_000; performance.now() < until; ) {
  const [row] = await db.sql<{ n: number }[]>`
    select count(*)::int as n from graphile_worker.jobs where attempts < max_attempts and run_at <= now()`;
  if (row?.n === 0) break;
  await sleep(500);
}
await sleep(2000);

// Every sighting of an order version, on the sandbox's clock (the one its delivery attempts are timed by).
const mirrored = new Map<string, [number, number][]>();
const read = new Map<string, [number, number][]>();
const note = (into: Map<string, [number, number][]>) => (orderId: string, version: number) => {
  const list = into.get(orderId) ?? [];
  list.push([version, sandbox.clock.now()]);
  into.set(orderId, list);
};
const replicaWatch = await watchReplicaVersions(db.sql, note(mirrored));
const feedWatch = await watchFeedVersions(db.sql, note(read));

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

sandbox.resetStats();
const rushStart = sandbox.clock.now();
sandbox.startGenerator({ ratePerSecond: RATE, advanceEveryMs: 4000 });
await sleep(SECONDS * 1000);
sandbox.stopGenerator();
const rushEnd = sandbox.clock.now();
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
await replicaWatch.close();
await feedWatch.close();

// 2xx → seen: per delivered order event of the rush, from its successful attempt's end to the first sighting
// of its version or newer (0 when that came first).
const ackAt = new Map<string, number>();
for (const d of sandbox.deliveries()) {
  const ok = d.attempts.find((a) => a.status !== null && a.status >= 200 && a.status < 300);
  if (ok) ackAt.set(d.event_id, Date.parse(ok.ended_at));
}
const waits = (seen: Map<string, [number, number][]>) => {
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

await Promise.all([worker.process.stop(), receiver.process.stop()]);
await sandbox.close();
await db.drop();

console.log(
  `\nrush: ${MERCHANTS} merchants, ${RATE} new orders/s for ${SECONDS} s, LOOPS_MAX_RPS=${RPS}; ${machine.cores} cores, load ${formatLoad(machine)} (shared with other work)`,
);
console.log(
  `order events ${orderEvents.length} (${(orderEvents.length / SECONDS).toFixed(1)}/s), acknowledged ${ackAt.size}`,
);
console.log(
  `2xx → mirrored p50 ${ms(percentile(replica.all, 50))}, p99 ${ms(percentile(replica.all, 99))} (last 15 s: p99 ${ms(percentile(replica.late, 99))})`,
);
console.log(`2xx → feed reader p99 ${ms(percentile(feed.all, 99))}`);
console.log(
  `calls per order event ${(calls / orderEvents.length).toFixed(2)} (${calls} API calls: ${routes}; ${stats.tokenRequests} token requests)`,
);
console.log(`busiest second ${stats.busiestSecond} / ${RPS}`);
console.log(
  `oldest unconfirmed ${unconfirmedKnown ? `${(oldestUnconfirmed ?? 0).toFixed(1)} s` : "n/a (no unconfirmed_since)"}`,
);
console.log(
  convergedAfter === undefined
    ? `replica NOT equal to upstream ${SETTLE_SECONDS} s after the last event (${differing} orders differ)`
    : `replica equal to upstream ${convergedAfter.toFixed(1)} s after the last event`,
);
