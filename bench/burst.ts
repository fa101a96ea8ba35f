// `node bench/burst.ts [--orders 80] [--bursts 6] [--gap-ms 2000] [--api-ms 20] [--json]`: freshness of a
// burst of new orders in a calm phase (issue 54). `loops-sync receiver` and `worker` as their own processes at
// the raised budget `pnpm bench` gives them (LOOPS_MAX_RPS 10000), the sandbox answering after --api-ms; each
// burst is --orders new sandbox orders whose signed `order.created` webhooks are POSTed at once, then nothing
// until every version is seen and --gap-ms has passed. Prints 2xx → replica commit, → the bench's LISTEN
// reader and → @loops-sync/schema's followChanges, p50/p99; and where the time went, so a slower run names its
// stage: per order, 2xx → the applier's transaction start → its feed insert → commit seen → feed reader; the
// worker's own stage means (queued, fetch, commit); CPU ms per order of the worker, the receiver and this
// database's backends; the API calls the bursts made. Alternate two trees run by run and compare ratios.
// Figures only: nothing here passes or fails.
import { randomBytes } from "node:crypto";
import { readFile } from "node:fs/promises";
import { parseArgs } from "node:util";
import type { Sql } from "@loops-sync/db";
import { startSandbox } from "@loops-sync/sandbox";
import { followChanges } from "@loops-sync/schema";
import { Pool } from "undici";
import { openBenchServer } from "./bench-database.ts";
import { describeMachine } from "./machine.ts";
import { waitForIdleWorker } from "./measure-freshness.ts";
import { percentile } from "./percentile.ts";
import { sendOrderTraffic } from "./send-order-traffic.ts";
import { serviceEnv, startReceiverProcess, startWorkerProcess } from "./service-processes.ts";
import { watchFeedVersions } from "./watch-feed-versions.ts";
import { watchReplicaVersions } from "./watch-replica-versions.ts";
import { createWebhookSigner } from "./webhook-signer.ts";
import { readWorkerStages, stagesBetween } from "./worker-stages.ts";

const { values } = parseArgs({
  options: {
    orders: { type: "string", default: "80" },
    bursts: { type: "string", default: "6" },
    "gap-ms": { type: "string", default: "2000" },
    "api-ms": { type: "string", default: "20" },
    "worker-concurrency": { type: "string", default: "32" },
    json: { type: "boolean", default: false },
  },
});
const ORDERS = Number(values.orders);
const BURSTS = Number(values.bursts);
const GAP_MS = Number(values["gap-ms"]);
const API_MS = Number(values["api-ms"]);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const machineBefore = await describeMachine();
const server = await openBenchServer();
const db = await server.createDatabase();
const sandbox = await startSandbox({ port: 0, faults: { apiSlowRate: 1, apiSlowMs: API_MS } });
const signer = createWebhookSigner();
const env = serviceEnv({ databaseUrl: db.url, sandbox });
const receiver = await startReceiverProcess(env, signer.secret);
const worker = await startWorkerProcess(env, {
  concurrency: Number(values["worker-concurrency"]),
  poolSize: 10,
});

/** First sighting of each order (all are new: version 1 is the first and only one) by each observer. */
const committedAt = new Map<string, number>();
const readAt = new Map<string, number>();
const replicaWatch = await watchReplicaVersions(db.sql, (id, _v, at) => {
  if (!committedAt.has(id)) committedAt.set(id, at);
});
const feedWatch = await watchFeedVersions(db.sql, (id, _v, at) => {
  if (!readAt.has(id)) readAt.set(id, at);
});

// The published reader too (@loops-sync/schema's followChanges, as a partner's backend runs it).
const followedAt = new Map<string, number>();
const following = new AbortController();
const follower = (async () => {
  for await (const change of followChanges(db.sql, { after: 0, signal: following.signal })) {
    if (change.resource === "order" && !followedAt.has(change.resource_id))
      followedAt.set(change.resource_id, performance.now());
  }
})();

try {
  // Warm-up, not counted: token, pools, JIT; then the start's catch-up and an idle worker.
  await sendOrderTraffic({
    sandbox,
    signer,
    receiverUrl: receiver.url!,
    rate: 100,
    seconds: 1,
    onAck: () => {},
  });
  await worker.process.waitForLine((l) => l.msg === "catch-up run finished", 30_000);
  await waitForIdleWorker(db.sql, 30_000);
  await sleep(GAP_MS);
  const adminLine = await worker.process.waitForLine((l) => l.msg === "admin listening");
  const metricsUrl = `${String(adminLine.url)}/metrics`;
  const stagesBefore = await readWorkerStages(metricsUrl);

  const callsBefore = { ...sandbox.stats().apiCalls };
  const cpu = startCpuSampler(db.sql, {
    worker: worker.process.pid,
    receiver: receiver.process.pid,
  });
  const run = randomBytes(3).toString("hex");
  const pool = new Pool(receiver.url!, { connections: ORDERS });
  const acked: { orderId: string; ackAt: number; sentAt: number }[] = [];
  let failed = 0;
  for (let b = 0; b < BURSTS; b++) {
    const requests: Promise<void>[] = [];
    for (let i = 0; i < ORDERS; i++) {
      const merchantId = sandbox.merchantIds[i % sandbox.merchantIds.length]!;
      const order = sandbox.createOrder({ merchantId });
      const signed = signer.signOrder(`evt_burst_${run}_${b}_${i}`, "order.created", order);
      const sentAt = performance.now();
      requests.push(
        pool
          .request({ method: "POST", path: "/webhooks/loops", headers: signed.headers, body: signed.body })
          .then(
            async (response) => {
              await response.body.dump();
              if (response.statusCode >= 200 && response.statusCode < 300)
                acked.push({ orderId: order.id, sentAt, ackAt: performance.now() });
              else failed++;
            },
            () => {
              failed++;
            },
          ),
      );
    }
    await Promise.all(requests);
    for (const until = performance.now() + 15_000; performance.now() < until; ) {
      if (
        acked.every((a) => readAt.has(a.orderId) && committedAt.has(a.orderId) && followedAt.has(a.orderId))
      )
        break;
      await sleep(20);
    }
    await sleep(GAP_MS);
  }
  await pool.close();
  const cpuMs = await cpu.stop();
  // Which calls the bursts made: one GET per new order, or list pages and confirmations besides.
  const calls = Object.fromEntries(
    Object.entries(sandbox.stats().apiCalls)
      .map(([route, n]) => [route, n - (callsBefore[route] ?? 0)] as const)
      .filter(([, n]) => n > 0),
  );
  const stages = stagesBetween(stagesBefore, await readWorkerStages(metricsUrl));

  const wait = (seen: Map<string, number>) =>
    acked.map((a) => {
      const at = seen.get(a.orderId);
      return at === undefined ? Number.POSITIVE_INFINITY : Math.max(0, at - a.ackAt);
    });
  const toReplica = wait(committedAt);
  const toReader = wait(readAt);
  const toFollower = wait(followedAt);
  const commitToReader = acked.map((a) => {
    const c = committedAt.get(a.orderId);
    const r = readAt.get(a.orderId);
    return c === undefined || r === undefined ? Number.POSITIVE_INFINITY : Math.max(0, r - c);
  });
  const ack = acked.map((a) => a.ackAt - a.sentAt);
  // Per order, on the wall clock: the applier's transaction start (replica.orders.synced_at, now()) and its
  // feed insert (replica.changes.changed_at, clock_timestamp()), between the 2xx and the commit seen.
  const times = await db.sql<{ id: string; synced: number; changed: number }[]>`
    select o.id, extract(epoch from o.synced_at)::float8 * 1000 as synced,
           extract(epoch from min(c.changed_at))::float8 * 1000 as changed
    from replica.orders o join replica.changes c on c.resource = 'order' and c.resource_id = o.id
    where o.id = any(${acked.map((a) => a.orderId)}::text[])
    group by o.id, o.synced_at`;
  const byId = new Map(times.map((t) => [t.id, t]));
  const wall = (at: number) => performance.timeOrigin + at;
  const span = (from: (a: (typeof acked)[number]) => number | undefined, to: typeof from) =>
    acked.map((a) => {
      const f = from(a);
      const t = to(a);
      return f === undefined || t === undefined ? Number.POSITIVE_INFINITY : t - f;
    });
  const ackToTxStart = span(
    (a) => wall(a.ackAt),
    (a) => byId.get(a.orderId)?.synced,
  );
  const txStartToFeedInsert = span(
    (a) => byId.get(a.orderId)?.synced,
    (a) => byId.get(a.orderId)?.changed,
  );
  const feedInsertToCommitSeen = span(
    (a) => byId.get(a.orderId)?.changed,
    (a) => {
      const c = committedAt.get(a.orderId);
      return c === undefined ? undefined : wall(c);
    },
  );
  const machineAfter = await describeMachine();
  const figures = {
    orders: ORDERS,
    bursts: BURSTS,
    acked: acked.length,
    failed,
    load: [machineBefore.load?.[0], machineAfter.load?.[0]],
    readerP50: percentile(toReader, 50),
    readerP99: percentile(toReader, 99),
    followP50: percentile(toFollower, 50),
    followP99: percentile(toFollower, 99),
    replicaP50: percentile(toReplica, 50),
    replicaP99: percentile(toReplica, 99),
    commitToReaderP50: percentile(commitToReader, 50),
    commitToReaderP99: percentile(commitToReader, 99),
    ackP50: percentile(ack, 50),
    ackP99: percentile(ack, 99),
    ackToTxStartP50: percentile(ackToTxStart, 50),
    ackToTxStartP99: percentile(ackToTxStart, 99),
    txStartToFeedInsertP50: percentile(txStartToFeedInsert, 50),
    txStartToFeedInsertP99: percentile(txStartToFeedInsert, 99),
    feedInsertToCommitSeenP50: percentile(feedInsertToCommitSeen, 50),
    feedInsertToCommitSeenP99: percentile(feedInsertToCommitSeen, 99),
    /** CPU ms per acknowledged order over the measured bursts, by process (postgres: this database's backends). */
    cpuMsPerOrder: Object.fromEntries(
      Object.entries(cpuMs).map(([k, v]) => [k, v / Math.max(1, acked.length)]),
    ),
    apiCalls: calls,
    stages: Object.fromEntries(stages.map((s) => [s.stage, { n: s.count, meanMs: s.meanMs }])),
  };
  const ms = (v: number) => (Number.isFinite(v) ? v.toFixed(0) : "never");
  if (values.json) console.log(JSON.stringify(figures));
  else {
    console.log(
      `burst: ${BURSTS} × ${ORDERS} new orders, API ${API_MS} ms, load ${figures.load.map((l) => l?.toFixed(1)).join("→")}`,
    );
    console.log(
      `acknowledged ${acked.length}, failed ${failed}; ack p50 ${ms(figures.ackP50)} / p99 ${ms(figures.ackP99)} ms`,
    );
    console.log(`2xx → feed reader    p50 ${ms(figures.readerP50)} / p99 ${ms(figures.readerP99)} ms`);
    console.log(`2xx → followChanges  p50 ${ms(figures.followP50)} / p99 ${ms(figures.followP99)} ms`);
    console.log(`2xx → replica commit p50 ${ms(figures.replicaP50)} / p99 ${ms(figures.replicaP99)} ms`);
    console.log(
      `commit → feed reader p50 ${ms(figures.commitToReaderP50)} / p99 ${ms(figures.commitToReaderP99)} ms`,
    );
    console.log(
      `per order: 2xx → commit's transaction start p50 ${ms(figures.ackToTxStartP50)} / p99 ${ms(figures.ackToTxStartP99)} ms, ` +
        `→ its feed insert p50 ${ms(figures.txStartToFeedInsertP50)} / p99 ${ms(figures.txStartToFeedInsertP99)} ms, ` +
        `→ commit seen p50 ${ms(figures.feedInsertToCommitSeenP50)} / p99 ${ms(figures.feedInsertToCommitSeenP99)} ms`,
    );
    console.log(
      `CPU per order: ${Object.entries(figures.cpuMsPerOrder)
        .map(([k, v]) => `${k} ${v.toFixed(2)} ms`)
        .join(", ")}`,
    );
    console.log(
      `API calls: ${Object.entries(calls)
        .map(([route, n]) => `${route} ${n}`)
        .join(", ")}`,
    );
    for (const s of stages) console.log(`worker ${s.stage}: n=${s.count} mean ${s.meanMs.toFixed(1)} ms`);
  }
} finally {
  following.abort();
  await follower.catch(() => {});
  await receiver.process.stop();
  await worker.process.stop();
  await replicaWatch.close();
  await feedWatch.close();
  await sandbox.close();
  await db.drop();
  await server.close();
}

/** utime + stime of a process, in ms (undefined once it has gone). */
async function cpuOf(pid: number): Promise<number | undefined> {
  try {
    const stat = await readFile(`/proc/${pid}/stat`, "utf8");
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100;
  } catch {
    return undefined;
  }
}

/**
 * CPU time spent by the named processes and by this database's Postgres backends (sampled every 100 ms, so a
 * backend that comes and goes in the window is counted from its start) until `stop()`.
 */
function startCpuSampler(sql: Sql, processes: Record<string, number>) {
  const first = new Map<number, number>();
  const last = new Map<number, number>();
  const backends = new Set<number>();
  let started = false;
  const sample = async () => {
    const rows = await sql<{ pid: number }[]>`
      select pid from pg_stat_activity where datname = current_database() and pid <> pg_backend_pid()`;
    for (const { pid } of rows) backends.add(pid);
    for (const pid of [...Object.values(processes), ...backends]) {
      const t = await cpuOf(pid);
      if (t === undefined) continue;
      if (!first.has(pid)) first.set(pid, !started || Object.values(processes).includes(pid) ? t : 0);
      last.set(pid, t);
    }
  };
  const firstSample = sample().then(() => {
    started = true;
  });
  let sampling = Promise.resolve();
  const timer = setInterval(() => {
    sampling = sampling.then(sample, sample);
  }, 100);
  const spent = (pid: number) => (last.get(pid) ?? 0) - (first.get(pid) ?? 0);
  return {
    async stop(): Promise<Record<string, number>> {
      clearInterval(timer);
      await firstSample;
      await sampling;
      await sample();
      const out: Record<string, number> = {};
      for (const [name, pid] of Object.entries(processes)) out[name] = spent(pid);
      out.postgres = [...backends].reduce((n, pid) => n + spent(pid), 0);
      return out;
    },
  };
}
