// Live order freshness while a backend writes through the gateway (issue 51, "Measure"): the lunch rush of
// bench/rush.ts (the sandbox's generator, signed webhooks to `loops-sync receiver`, `loops-sync worker`
// mirroring) at the default request budget, in alternating phases of one run: (a) the live orders alone,
// (b) the same while a backend sends `writesPerSecond` writes through the receiver's gateway (location PATCHes
// and, every `importEvery`-th write, a menu import, each for a merchant of the rush).
import { DEFAULT_WEBHOOK_SECRET, manyMerchantsSeed, type Sandbox, startSandbox } from "@loops-sync/sandbox";
import type { BenchServer } from "./bench-database.ts";
import { percentile } from "./percentile.ts";
import { type Sightings, waitForQuietQueue, watchVersionSightings } from "./rush-scenario.ts";
import { serviceEnv, startReceiverProcess, startWorkerProcess } from "./service-processes.ts";
import { readWorkerStages, type StageFigure, stagesBetween } from "./worker-stages.ts";

export interface WriteLoadOptions {
  /** Merchants of the rush (each with one brand and one location). */
  merchants: number;
  /** New orders per second; each moves a step every 4 s (≈ 5 order events per order). */
  ordersPerSecond: number;
  /** LOOPS_MAX_RPS for every process: the default budget, not raised. */
  rps: number;
  /** The backend's writes through the gateway per second in a (b) phase. */
  writesPerSecond: number;
  /** Every this-many-th write is a menu import, the others location PATCHes. */
  importEvery: number;
  phaseSeconds: number;
  /** Pairs (a, b), then a last (a). */
  rounds: number;
  /** Quiet time before each phase, not counted: a (b) phase's followed jobs finish in it. */
  gapSeconds: number;
  /** Orders generated before the first phase, not counted, so every phase meets the same order mix. */
  warmupSeconds: number;
}

export interface PhaseFigures {
  phase: "a" | "b";
  /** Order events emitted in the phase, and those whose webhook got a 2xx. */
  orderEvents: number;
  acknowledged: number;
  /** ms from the event's emission (the webhook's send) to its version (or a newer one) in replica.orders. */
  freshness: Percentiles;
  /** ms from the webhook's 2xx to the same commit (bench/rush.ts's figure). */
  ackToMirrored: Percentiles;
  /** ms from the emission to a feed reader holding the change. */
  feed: Percentiles;
  /** Events whose version the replica never showed. */
  unseen: number;
  /** API calls Loops (the sandbox) saw per second, all routes; of which the gateway's writes and order reads. */
  callsPerSecond: number;
  gatewayCallsPerSecond: number;
  orderCallsPerSecond: number;
  busiestSecond: number;
  /** Seconds of the phase in which the worker's order batches read list pages (the budget busy). */
  bulkSeconds: number;
  /** Where the worker's order refreshes spent the phase (its own metrics). */
  refreshStages: StageFigure[];
  /** The backend's writes in the phase, by the gateway's answer. */
  writes: {
    sent: number;
    ok: number;
    rateLimited: number;
    other: number;
    mirrored: number;
    p50Ms: number;
    p99Ms: number;
  };
}

interface Percentiles {
  p50: number;
  p99: number;
}

export interface WriteLoadFigures {
  options: WriteLoadOptions;
  phases: PhaseFigures[];
  /** Pooled over the phases of each kind. */
  a: { freshness: Percentiles; feed: Percentiles; ackToMirrored: Percentiles };
  b: { freshness: Percentiles; feed: Percentiles; ackToMirrored: Percentiles };
  /** b / a. */
  ratio: { p50: number; p99: number; feedP99: number };
  /** Each (b) phase against the mean of the (a) phases on either side of it. */
  bracketed: { phase: number; p50: number; p99: number }[];
}

const TOKEN = "bench-gateway-token-0123456789";
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const GATEWAY_ROUTES = new Set(["PATCH /locations/{location_id}", "PUT /brands/{brand_id}/menu"]);

const days = ["sunday", "monday", "tuesday", "wednesday", "thursday", "friday", "saturday"];
const week = (n: number) =>
  Object.fromEntries(
    days.map((d) => [d, [{ opens: `0${n % 10}:${String(n % 60).padStart(2, "0")}`, closes: "23:00" }]]),
  );
/** A one-product menu import body, its price and names varied by `n`. */
export const menu = (n: number) => ({
  categories: [{ external_ref: "c", name: { en: "C", ar: "ج" } }],
  products: [
    {
      external_ref: `p${n}`,
      category_external_ref: "c",
      name: { en: `P${n}`, ar: "م" },
      price: { amount: 1000 + n, currency: "SAR" },
    },
  ],
});

/**
 * A backend writing at `rate` per second through the gateway, open loop (a slow answer does not lower the
 * rate): the merchants in turn, a location PATCH or every `importEvery`-th write a menu import.
 */
function startGatewayWriter(
  gatewayUrl: string,
  merchantIds: readonly string[],
  rate: number,
  importEvery: number,
) {
  const times: number[] = [];
  const counts = { sent: 0, ok: 0, rateLimited: 0, other: 0, mirrored: 0 };
  const inFlight = new Set<Promise<void>>();
  const started = performance.now();
  const sendOne = (i: number) => {
    const merchantId = merchantIds[i % merchantIds.length]!;
    const n = merchantId.slice("mer_t".length);
    const isImport = i % importEvery === importEvery - 1;
    const [method, path, body] = isImport
      ? ["PUT", `/brands/brd_t${n}/menu`, menu(i)]
      : ["PATCH", `/locations/loc_t${n}`, { opening_hours: week(i) }];
    const at = performance.now();
    const request = fetch(`${gatewayUrl}${path}`, {
      method,
      headers: {
        authorization: `Bearer ${TOKEN}`,
        "service-merchant-id": merchantId,
        "content-type": "application/json",
        "idempotency-key": `bench-${started.toFixed(0)}-${i}`,
      },
      body: JSON.stringify(body),
    })
      .then(async (response) => {
        await response.arrayBuffer();
        times.push(performance.now() - at);
        if (response.ok) counts.ok++;
        else if (response.status === 429) counts.rateLimited++;
        else counts.other++;
        if (response.headers.get("loops-sync-mirrored") === "true") counts.mirrored++;
      })
      .catch(() => {
        counts.other++;
      })
      .finally(() => inFlight.delete(request));
    inFlight.add(request);
  };
  const timer = setInterval(() => {
    const owed = Math.floor((rate * (performance.now() - started)) / 1000) - counts.sent;
    for (let k = 0; k < owed; k++) sendOne(counts.sent++);
  }, 10);
  return {
    async stop() {
      clearInterval(timer);
      await Promise.all(inFlight);
      return { ...counts, p50Ms: percentile(times, 50), p99Ms: percentile(times, 99) };
    },
  };
}

/** Runs the alternating phases in a database of their own; prints one line per phase as it ends. */
export async function measureFreshnessUnderWrites(
  server: BenchServer,
  options: WriteLoadOptions,
): Promise<WriteLoadFigures> {
  const db = await server.createDatabase();
  const sandbox = await startSandbox({ seed: manyMerchantsSeed(options.merchants) });
  const env = {
    ...serviceEnv({ databaseUrl: db.url, sandbox }),
    LOOPS_MAX_RPS: String(options.rps),
    LOG_LEVEL: "info",
    RECONCILE_CRON: "*/15 * * * *",
  };
  const receiver = await startReceiverProcess({ ...env, GATEWAY_TOKEN: TOKEN }, DEFAULT_WEBHOOK_SECRET);
  const gatewayLine = await receiver.process.waitForLine((l) => l.msg === "gateway listening");
  sandbox.addWebhookEndpoint({ url: `${receiver.url}/webhooks/loops`, secrets: [DEFAULT_WEBHOOK_SECRET] });
  const worker = await startWorkerProcess(env, { concurrency: 8, poolSize: 10 });
  const adminLine = await worker.process.waitForLine((l) => l.msg === "admin listening");
  const metricsUrl = `${String(adminLine.url)}/metrics`;
  try {
    await waitForQuietQueue(db.sql, 120_000);
    await sleep(2000);

    const sightings = await watchVersionSightings(db.sql, () => sandbox.clock.now());
    const { mirrored, read } = sightings;
    sandbox.startGenerator({
      ratePerSecond: options.ordersPerSecond,
      advanceEveryMs: 4000,
      merchantIds: sandbox.merchantIds,
    });

    // Each webhook's 2xx, on the sandbox's clock; read after every phase (the sandbox keeps the last 5 000).
    const ackAt = new Map<string, number>();
    const noteAcks = () => {
      for (const d of sandbox.deliveries()) {
        const ok = d.attempts.find((a) => a.status !== null && a.status >= 200 && a.status < 300);
        if (ok) ackAt.set(d.event_id, Date.parse(ok.ended_at));
      }
    };
    // The generator's orders take ~20 s to reach their steady mix of new and moving orders.
    await sleep(options.warmupSeconds * 1000);
    const windows: {
      phase: "a" | "b";
      start: number;
      end: number;
      wallStart: number;
      wallEnd: number;
      stats: ReturnType<Sandbox["stats"]>;
      stages: StageFigure[];
      writes: PhaseFigures["writes"];
    }[] = [];
    // a b a b … a: each (b) phase has an (a) on both sides, so a drift of the shared machine's load over the
    // run does not read as the writes' cost.
    const order = [...Array.from({ length: options.rounds }, () => ["a", "b"] as const).flat(), "a" as const];
    for (const phase of order) {
      await sleep(options.gapSeconds * 1000);
      noteAcks();
      const stagesBefore = await readWorkerStages(metricsUrl);
      sandbox.resetStats();
      const start = sandbox.clock.now();
      const wallStart = Date.now();
      const writer =
        phase === "b"
          ? startGatewayWriter(
              String(gatewayLine.url),
              sandbox.merchantIds,
              options.writesPerSecond,
              options.importEvery,
            )
          : undefined;
      await sleep(options.phaseSeconds * 1000);
      const end = sandbox.clock.now();
      const wallEnd = Date.now();
      const writes = (await writer?.stop()) ?? {
        sent: 0,
        ok: 0,
        rateLimited: 0,
        other: 0,
        mirrored: 0,
        p50Ms: Number.NaN,
        p99Ms: Number.NaN,
      };
      const stats = sandbox.stats();
      const stages = stagesBetween(stagesBefore, await readWorkerStages(metricsUrl));
      windows.push({ phase, start, end, wallStart, wallEnd, stats, stages, writes });
      process.stderr.write(`phase ${phase} done (${windows.length}/${order.length})\n`);
    }
    sandbox.stopGenerator();
    await sandbox.flushDeliveries();
    await sleep(options.gapSeconds * 1000);
    await sightings.close();

    noteAcks();
    const events = sandbox.truth.events().filter((e) => e.type.startsWith("order."));
    const firstSeen = (seen: Sightings, orderId: string, version: number) =>
      (seen.get(orderId) ?? []).find(([v]) => v >= version)?.[1] ?? Number.POSITIVE_INFINITY;

    const samples = {
      a: { f: [] as number[], m: [] as number[], r: [] as number[] },
      b: { f: [] as number[], m: [] as number[], r: [] as number[] },
    };
    const phases: PhaseFigures[] = windows.map((w) => {
      const f: number[] = [];
      const m: number[] = [];
      const r: number[] = [];
      let orderEvents = 0;
      let unseen = 0;
      for (const e of events) {
        const created = Date.parse(e.created_at);
        if (created < w.start || created >= w.end) continue;
        orderEvents++;
        const ack = ackAt.get(e.id);
        if (ack === undefined) continue;
        const orderId = String(e.data.order_id);
        const version = Number(e.data.version);
        const seenAt = firstSeen(mirrored, orderId, version);
        if (!Number.isFinite(seenAt)) unseen++;
        f.push(Math.max(0, seenAt - created));
        m.push(Math.max(0, seenAt - ack));
        r.push(Math.max(0, firstSeen(read, orderId, version) - created));
      }
      samples[w.phase].f.push(...f);
      samples[w.phase].m.push(...m);
      samples[w.phase].r.push(...r);
      const seconds = (w.end - w.start) / 1000;
      const calls = Object.entries(w.stats.apiCalls);
      const sum = (keep: (route: string) => boolean) =>
        calls.filter(([route]) => keep(route)).reduce((n, [, c]) => n + c, 0) / seconds;
      return {
        phase: w.phase,
        orderEvents,
        acknowledged: f.length,
        freshness: pct(f),
        ackToMirrored: pct(m),
        feed: pct(r),
        unseen,
        callsPerSecond: sum(() => true),
        gatewayCallsPerSecond: sum((route) => GATEWAY_ROUTES.has(route)),
        orderCallsPerSecond: sum((route) => route.startsWith("GET /orders")),
        busiestSecond: w.stats.busiestSecond,
        bulkSeconds: bulkSeconds(worker.process.lines, w.wallStart, w.wallEnd),
        refreshStages: w.stages,
        writes: w.writes,
      };
    });
    const pooled = (s: { f: number[]; m: number[]; r: number[] }) => ({
      freshness: pct(s.f),
      feed: pct(s.r),
      ackToMirrored: pct(s.m),
    });
    const a = pooled(samples.a);
    const b = pooled(samples.b);
    return {
      options,
      phases,
      a,
      b,
      ratio: {
        p50: b.freshness.p50 / a.freshness.p50,
        p99: b.freshness.p99 / a.freshness.p99,
        feedP99: b.feed.p99 / a.feed.p99,
      },
      bracketed: phases.flatMap((p, i) => {
        const [before, after] = [phases[i - 1], phases[i + 1]];
        if (p.phase !== "b" || !before || !after) return [];
        const of = (k: "p50" | "p99") => p.freshness[k] / ((before.freshness[k] + after.freshness[k]) / 2);
        return [{ phase: i + 1, p50: of("p50"), p99: of("p99") }];
      }),
    };
  } finally {
    sandbox.stopGenerator();
    await Promise.all([worker.process.stop(), receiver.process.stop()]);
    await sandbox.close();
    await db.drop();
  }
}

/** Seconds between `from` and `to` (epoch ms) the worker's log says its order batches read list pages. */
function bulkSeconds(lines: readonly Record<string, unknown>[], from: number, to: number): number {
  let busy = false;
  let since = from;
  let total = 0;
  for (const line of lines) {
    const at = Number(line.time);
    const msg = String(line.msg);
    const turns = msg.startsWith("the request budget is busy")
      ? true
      : msg.startsWith("the request budget is free")
        ? false
        : undefined;
    if (turns === undefined || !Number.isFinite(at)) continue;
    if (at <= from) {
      busy = turns;
      continue;
    }
    if (at >= to) break;
    if (busy && !turns) total += at - since;
    if (!busy && turns) since = at;
    busy = turns;
  }
  if (busy) total += to - Math.max(since, from);
  return total / 1000;
}

const pct = (values: number[]): Percentiles => ({ p50: percentile(values, 50), p99: percentile(values, 99) });

const ms = (v: number) => (Number.isFinite(v) ? `${v.toFixed(0)} ms` : "never");

/** The figures as lines: one per phase, the pooled a and b, and the ratio. */
export function formatWriteLoad(f: WriteLoadFigures): string[] {
  const lines = f.phases.map((p, i) => {
    const w = p.writes;
    return (
      `phase ${i + 1} (${p.phase}): order events ${p.orderEvents}, freshness p50 ${ms(p.freshness.p50)} p99 ${ms(p.freshness.p99)}` +
      ` (2xx → mirrored p99 ${ms(p.ackToMirrored.p99)}, feed p99 ${ms(p.feed.p99)}${p.unseen ? `, ${p.unseen} never mirrored` : ""})` +
      ` | upstream ${p.callsPerSecond.toFixed(1)} calls/s (gateway writes ${p.gatewayCallsPerSecond.toFixed(1)}, orders ${p.orderCallsPerSecond.toFixed(1)}), busiest second ${p.busiestSecond}/${f.options.rps}, list pages ${p.bulkSeconds.toFixed(0)} s` +
      (p.phase === "b"
        ? ` | writes ${w.sent}: 2xx ${w.ok} (mirrored ${w.mirrored}), 429 ${w.rateLimited}, other ${w.other}, answer p50 ${ms(w.p50Ms)} p99 ${ms(w.p99Ms)}`
        : "") +
      `\n    worker stages: ${p.refreshStages
        .filter((st) => st.count > 0)
        .map(
          (st) =>
            `${st.stage} ${st.meanMs.toFixed(0)} ms (n ${st.count}, >100 ms ${(100 * st.over100ms).toFixed(0)} %)`,
        )
        .join(", ")}`
    );
  });
  lines.push(
    `a (live orders only): freshness p50 ${ms(f.a.freshness.p50)} p99 ${ms(f.a.freshness.p99)}, feed p99 ${ms(f.a.feed.p99)}`,
    `b (+ ${f.options.writesPerSecond} gateway writes/s): freshness p50 ${ms(f.b.freshness.p50)} p99 ${ms(f.b.freshness.p99)}, feed p99 ${ms(f.b.feed.p99)}`,
    `ratio b/a: p50 ${f.ratio.p50.toFixed(2)}×, p99 ${f.ratio.p99.toFixed(2)}×, feed p99 ${f.ratio.feedP99.toFixed(2)}×`,
    `each (b) against the (a) on either side: ${f.bracketed
      .map((r) => `phase ${r.phase} p50 ${r.p50.toFixed(2)}× p99 ${r.p99.toFixed(2)}×`)
      .join("; ")}`,
  );
  return lines;
}
