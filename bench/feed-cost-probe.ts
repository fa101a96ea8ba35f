// `node bench/feed-cost-probe.ts [--concurrency 8] [--batch 1,10] [--seconds 5] [--rounds 3] [--orders 4000]
// [--modes none,unlocked,feed] [--json]`: what the change feed costs the apply path. Concurrent writers apply
// orders as the worker does (one version-gated upsert per transaction, the feed's insert sent last and
// travelling with the COMMIT), rotating on the same database between `none` (the feed's insert skipped),
// `feed` (as shipped) and, to split the cost, the insert with its lock and/or NOTIFY triggers disabled (this
// database only). Prints orders applied per second of each run and each mode's ratio to `none` per round
// (the machine is shared: compare ratios).
import { parseArgs } from "node:util";
import { connect, pipelinedTransaction, recordChanges } from "@loops-sync/db";
import { applyOrdersIfNewer, orderChanges } from "@loops-sync/replica";
import { startSandbox } from "@loops-sync/sandbox";
import { openBenchServer } from "./bench-database.ts";
import { describeMachine, formatLoad } from "./machine.ts";

const { values } = parseArgs({
  options: {
    concurrency: { type: "string", default: "8" },
    batch: { type: "string", default: "1,10" },
    seconds: { type: "string", default: "5" },
    rounds: { type: "string", default: "3" },
    orders: { type: "string", default: "4000" },
    modes: { type: "string", default: "none,insert,notify,lock,feed" },
    json: { type: "boolean", default: false },
  },
});
const concurrency = Number(values.concurrency);
const batches = values.batch.split(",").map(Number);
const seconds = Number(values.seconds);
const rounds = Number(values.rounds);
const count = Number(values.orders);

const server = await openBenchServer();
const db = await server.createDatabase();
const sandbox = await startSandbox({ port: 0 });
// One connection per writer (the bench database's own pool is small).
const pool = connect(db.url, { max: concurrency, applicationName: "loops-sync-bench-probe" });
const machineBefore = await describeMachine();
/**
 * none: no feed insert; feed: as shipped. Between them, to split the cost (triggers disabled in this bench
 * database only): insert (neither the feed's lock nor its NOTIFY), notify (the NOTIFY, no lock), lock (the
 * lock, no NOTIFY).
 */
type Mode = "none" | "insert" | "notify" | "lock" | "feed";
const TRIGGERS: Record<Mode, { lock: boolean; notify: boolean }> = {
  none: { lock: true, notify: true },
  insert: { lock: false, notify: false },
  notify: { lock: false, notify: true },
  lock: { lock: true, notify: false },
  feed: { lock: true, notify: true },
};
const modes = values.modes.split(",") as Mode[];
type Run = { batch: number; round: number; mode: Mode; ordersPerSecond: number; changes: number };
const runs: Run[] = [];
try {
  const orders = Array.from({ length: count }, (_, i) =>
    sandbox.createOrder({ merchantId: sandbox.merchantIds[i % sandbox.merchantIds.length]! }),
  );
  // Every write is a newer version, so every apply changes the row (and, with the feed, writes a change).
  const versions = new Map(orders.map((o) => [o.id, o.version]));
  // Each writer owns its slice of orders: no row lock is shared, as the worker's per-order job keys ensure.
  const slices = Array.from({ length: concurrency }, (_, w) =>
    orders.filter((_, i) => i % concurrency === w),
  );

  const measure = async (batch: number, mode: Mode): Promise<{ applied: number; ms: number }> => {
    // Bench database only: what the lock costs, apart from the insert.
    const on = TRIGGERS[mode];
    await db.sql.unsafe(`
      alter table replica.changes ${on.lock ? "enable" : "disable"} trigger changes_in_commit_order;
      alter table replica.changes ${on.notify ? "enable" : "disable"} trigger changes_notify;`);
    const stopAt = performance.now() + seconds * 1000;
    const started = performance.now();
    const applied = await Promise.all(
      slices.map(async (slice) => {
        let n = 0;
        for (let i = 0; performance.now() < stopAt; i = (i + batch) % slice.length) {
          const group = slice.slice(i, i + batch).map((o) => {
            const version = versions.get(o.id)! + 1;
            versions.set(o.id, version);
            return { ...o, version };
          });
          // As the worker does: BEGIN with the apply, the feed's insert last, travelling with the COMMIT.
          await pipelinedTransaction(pool, async (tx) => {
            const results = await applyOrdersIfNewer(tx, group);
            const changes = orderChanges(results, "webhook");
            return { result: null, tail: mode === "none" ? [] : [recordChanges(tx, changes)] };
          });
          n += group.length;
        }
        return n;
      }),
    );
    return { applied: applied.reduce((a, b) => a + b, 0), ms: performance.now() - started };
  };

  for (const batch of batches) {
    await measure(batch, "feed"); // warm-up: plans, pools, JIT
    for (let round = 1; round <= rounds; round++) {
      // Rotate which goes first, so a drift in the machine's load does not favour one mode.
      const order = modes.map((_, i) => modes[(i + round) % modes.length]!);
      for (const mode of order) {
        const [before] = await db.sql<{ n: number }[]>`select count(*)::int as n from replica.changes`;
        const { applied, ms } = await measure(batch, mode);
        const [after] = await db.sql<{ n: number }[]>`select count(*)::int as n from replica.changes`;
        const run = {
          batch,
          round,
          mode,
          ordersPerSecond: (applied / ms) * 1000,
          changes: after!.n - before!.n,
        };
        runs.push(run);
        if (!values.json) {
          console.error(
            `batch ${batch} round ${round} ${mode.padEnd(8)}: ${run.ordersPerSecond.toFixed(0)} orders/s (${run.changes} changes written)`,
          );
        }
      }
    }
  }
  await db.sql.unsafe(`
    alter table replica.changes enable trigger changes_in_commit_order;
    alter table replica.changes enable trigger changes_notify;`);
  const machineAfter = await describeMachine();
  const median = (xs: number[]) => xs.sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
  const summary = batches.flatMap((batch) =>
    modes
      .filter((m) => m !== "none")
      .map((mode) => {
        const ratios = Array.from({ length: rounds }, (_, r) => {
          const pick = (m: Mode) => runs.find((x) => x.batch === batch && x.round === r + 1 && x.mode === m)!;
          return pick(mode).ordersPerSecond / pick("none").ordersPerSecond;
        });
        return { batch, mode, ratios, medianRatio: median([...ratios]) };
      }),
  );
  if (values.json) {
    console.log(
      JSON.stringify({
        concurrency,
        seconds,
        rounds,
        orders: count,
        machineBefore,
        machineAfter,
        runs,
        summary,
      }),
    );
  } else {
    console.log(
      `${count} orders, ${concurrency} writers, ${seconds} s per run; load average ${formatLoad(machineBefore)} before, ${formatLoad(machineAfter)} after`,
    );
    for (const s of summary) {
      console.log(
        `batch ${s.batch}, ${s.mode} / none: ${s.ratios.map((r) => r.toFixed(3)).join(", ")} (median ${s.medianRatio.toFixed(3)}, ${((1 - s.medianRatio) * 100).toFixed(1)} % slower)`,
      );
    }
  }
} finally {
  await pool.end();
  await sandbox.close();
  await db.drop();
  await server.close();
}
