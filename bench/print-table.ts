import type { ServerInfo } from "./bench-database.ts";
import { formatLoad, type MachineInfo } from "./machine.ts";
import type { CatchupFigures } from "./measure-catchup.ts";
import type { FreshnessFigures } from "./measure-freshness.ts";
import type { ReceiverFigures } from "./measure-receiver.ts";

export interface BenchResults {
  machineBefore: MachineInfo;
  machineAfter: MachineInfo;
  database: ServerInfo;
  embedded: boolean;
  wallSeconds: number;
  receiver: ReceiverFigures | undefined;
  freshness: FreshnessFigures | undefined;
  catchup: CatchupFigures | undefined;
}

type Row = [
  figure: string,
  measured: string,
  baseline: string,
  ratio: string,
  target: string,
  verdict: string,
];

const n = (v: number, digits = 0) =>
  Number.isFinite(v)
    ? v.toLocaleString("en-US", { maximumFractionDigits: digits, minimumFractionDigits: digits })
    : "∞";
const mb = (bytes: number | undefined) => (bytes === undefined ? "?" : `${n(bytes / 2 ** 20)} MB`);
const ms = (v: number) => (Number.isFinite(v) ? `${n(v, v < 10 ? 1 : 0)} ms` : "∞");
const ratio = (a: number, b: number | undefined) => (b ? `${n(a / b, 2)}×` : "");
const verdict = (ok: boolean | undefined) => (ok === undefined ? "" : ok ? "met" : "MISSED");

function receiverRows(r: ReceiverFigures): Row[] {
  return [
    [
      "receiver: verified+stored+enqueued webhooks/s",
      n(r.receiver.perSecond),
      `bare Hono ${n(r.bare.perSecond)}/s`,
      ratio(r.receiver.perSecond, r.bare.perSecond),
      "≥ 10,000/s, ≥ 0.35× bare",
      verdict(r.receiver.perSecond >= 10_000 && r.receiver.perSecond >= 0.35 * r.bare.perSecond),
    ],
    [
      "receiver without LOOPS_APPLICATION_ID (all events in jobs)",
      n(r.withoutApplicationId.perSecond),
      `bare Hono ${n(r.bare.perSecond)}/s`,
      ratio(r.withoutApplicationId.perSecond, r.bare.perSecond),
      "",
      "",
    ],
    [
      "receiver vs raw multi-row INSERT",
      n(r.receiver.perSecond),
      `raw ${n(r.raw.perSecond)} rows/s (${r.raw.batchSize}/stmt, ${r.raw.concurrency} conns)`,
      ratio(r.receiver.perSecond, r.raw.perSecond),
      "",
      "",
    ],
    [
      "receiver ack latency p50 / p99 (100 conns)",
      `${ms(r.receiver.p50)} / ${ms(r.receiver.p99)}`,
      `bare ${ms(r.bare.p50)} / ${ms(r.bare.p99)}`,
      "",
      "",
      "",
    ],
  ];
}

function freshnessRows(f: FreshnessFigures): Row[] {
  return [
    [
      `freshness 2xx → replica p50 / p99 (${n(f.rate)}/s)`,
      `${ms(f.p50)} / ${ms(f.p99)}`,
      `one API GET ${ms(f.directFetchP50)} / ${ms(f.directFetchP99)}`,
      ratio(f.p99, f.directFetchP99),
      "p99 ≤ 100 ms",
      verdict(f.p99 <= 100),
    ],
    [
      `freshness 2xx → feed reader p50 / p99 (${n(f.rate)}/s)`,
      `${ms(f.readerP50)} / ${ms(f.readerP99)}`,
      `2xx → replica ${ms(f.p50)} / ${ms(f.p99)}`,
      ratio(f.readerP99, f.p99),
      "",
      f.readerChanges === f.feedRows
        ? `read all ${n(f.feedRows)}`
        : `read ${n(f.readerChanges)} of ${n(f.feedRows)}`,
    ],
    [`receiver ack p50 / p99 at ${n(f.rate)}/s`, `${ms(f.ackP50)} / ${ms(f.ackP99)}`, "", "", "", ""],
    [
      "GET /orders/{id} per event (live)",
      n(f.fetchesPerEvent, 3),
      "naive 1.000",
      ratio(f.fetchesPerEvent, 1),
      "",
      "",
    ],
  ];
}

function catchupRows(c: CatchupFigures): Row[] {
  return [
    [
      `catch-up ${n(c.events)} events / ${n(c.orders)} orders: wall`,
      `${n(c.wallSeconds, 1)} s`,
      `command alone ${n(c.commandSeconds, 1)} s`,
      "",
      "≤ 60 s",
      verdict(c.wallSeconds <= 60 && c.replicaMatches),
    ],
    ["catch-up events/s", n(c.eventsPerSecond), "", "", "", ""],
    [
      "catch-up API calls per event",
      n(c.callsPerEvent, 4),
      `naive ${n(c.naiveCallsPerEvent, 2)}`,
      ratio(c.callsPerEvent, c.naiveCallsPerEvent),
      "≤ 0.25",
      verdict(c.callsPerEvent <= 0.25),
    ],
  ];
}

function memoryRows(r: BenchResults): Row[] {
  const receiverPeak = Math.max(r.receiver?.peakRss ?? 0, r.freshness?.receiverPeakRss ?? 0) || undefined;
  const workerPeak = Math.max(r.freshness?.workerPeakRss ?? 0, r.catchup?.workerPeakRss ?? 0) || undefined;
  const rows: Row[] = [];
  if (receiverPeak)
    rows.push([
      "peak RSS receiver (VmHWM)",
      mb(receiverPeak),
      r.receiver ? `bare Hono ${mb(r.receiver.barePeakRss)}` : "",
      ratio(receiverPeak, r.receiver?.barePeakRss),
      "≤ 200 MB",
      verdict(receiverPeak <= 200 * 2 ** 20),
    ]);
  if (workerPeak)
    rows.push([
      "peak RSS worker (VmHWM)",
      mb(workerPeak),
      "",
      "",
      "≤ 200 MB",
      verdict(workerPeak <= 200 * 2 ** 20),
    ]);
  if (r.catchup?.catchupPeakRss)
    rows.push([
      "peak RSS catchup command",
      mb(r.catchup.catchupPeakRss),
      "",
      "",
      "≤ 200 MB",
      verdict(r.catchup.catchupPeakRss <= 200 * 2 ** 20),
    ]);
  return rows;
}

/** Prints the one table, with the machine and load it was measured on. */
export function printTable(r: BenchResults): void {
  const m = r.machineBefore;
  console.log(
    `\nloops-sync bench, ${m.date}: ${m.cores} cores (${m.cpuModel}), ${n(m.memoryGiB, 1)} GiB RAM, Node ${m.node}, ` +
      `PostgreSQL ${r.database.version}${r.embedded ? " (embedded)" : ""} (synchronous_commit=${r.database.synchronousCommit}, fsync=${r.database.fsync})`,
  );
  console.log(
    `load average before: ${formatLoad(r.machineBefore)}; after: ${formatLoad(r.machineAfter)}; run took ${n(r.wallSeconds)} s\n`,
  );
  const rows: Row[] = [
    ...(r.receiver ? receiverRows(r.receiver) : []),
    ...(r.freshness ? freshnessRows(r.freshness) : []),
    ...(r.catchup ? catchupRows(r.catchup) : []),
    ...memoryRows(r),
  ];
  const header: Row = ["figure", "measured", "baseline (same run)", "ratio", "target", ""];
  const widths = header.map((_, i) => Math.max(...[header, ...rows].map((row) => row[i]!.length)));
  const line = (row: Row) => `| ${row.map((c, i) => c.padEnd(widths[i]!)).join(" | ")} |`;
  console.log(line(header));
  console.log(`|${widths.map((w) => "-".repeat(w + 2)).join("|")}|`);
  for (const row of rows) console.log(line(row));
  console.log("");
  if (r.receiver) {
    console.log(
      `receiver check: ${n(r.receiver.stored)} stored during the measured load, ${n(r.receiver.meanBatch, 1)} events per commit; ` +
        (r.receiver.consistent
          ? "every 2xx stored and every stored event enqueued"
          : "MISMATCH between 2xx, rows and jobs"),
    );
  }
  if (r.freshness) {
    const f = r.freshness;
    console.log(
      `freshness: ${n(f.acked)} events acknowledged (${f.failed} refused), API answers after ${f.apiDelayMs} ms, ` +
        `WORKER_CONCURRENCY=${f.workerConcurrency}, max ${ms(f.max)}, ${f.unseen} versions never seen, ` +
        `${n(f.commitsPerEvent, 1)} Postgres commits per event`,
    );
    if (f.refreshStages.length > 0) {
      console.log(
        "freshness, where the worker's order refreshes spent it (its metrics; mean, share over 100 ms): " +
          f.refreshStages.map((s) => `${s.stage} ${ms(s.meanMs)} / ${n(s.over100ms * 100, 1)} %`).join(", "),
      );
    }
    for (const s of f.stages ?? []) {
      console.log(
        `  ${s.task.padEnd(18)} ${String(s.jobs).padStart(6)} jobs: delay ${ms(s.delayP50)}, wait for a worker p50 ${ms(s.waitP50)} p99 ${ms(s.waitP99)}, run p50 ${ms(s.runP50)} p99 ${ms(s.runP99)}`,
      );
    }
  }
  if (r.catchup) {
    const c = r.catchup;
    console.log(
      `catch-up: API answers after ${c.apiDelayMs} ms; calls ${JSON.stringify(c.calls)}; outcomes ${JSON.stringify(c.outcomes)}; ` +
        `replica equals the sandbox: ${c.replicaMatches ? "yes" : "NO"}`,
    );
  }
}
