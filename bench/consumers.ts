// Feed consumer figures (bench/README.md "Feed consumers"; docs/decisions.md "Feed consumers lease changes").
// Run: DATABASE_URL=postgres://… node bench/consumers.ts [--rate 1000] [--seconds 20] [--instances 3]
// A writer commits --rate changes/s (10 per transaction, over 1,000 orders) for --seconds. Beside it, in turn:
// 1. baseline: one reader following with replica.read_changes(after, 100), the cost of a plain cursor read;
// 2. --instances instances sharing one consumer: receive_changes(consumer, 100, 30), then ack_changes of what
//    they got in its own transaction. Printed: the time per call (p50/p99), rows per call, and the lag from a
//    change's commit to its ack (p50/p99), with duplicates and misses.
import { writeFileSync } from "node:fs";
import { parseArgs } from "node:util";
import { connect, recordChanges, type Sql } from "@loops-sync/db";
import { openBenchServer } from "./bench-database.ts";
import { describeMachine, formatLoad } from "./machine.ts";
import { percentile } from "./percentile.ts";

const { values } = parseArgs({
  options: {
    rate: { type: "string", default: "1000" },
    seconds: { type: "string", default: "20" },
    instances: { type: "string", default: "3" },
    out: { type: "string" },
  },
});
const RATE = Number(values.rate);
const SECONDS = Number(values.seconds);
const INSTANCES = Number(values.instances);
const PER_TX = 10;
const ORDERS = 1000;
if (!(RATE > 0 && SECONDS > 0 && INSTANCES >= 1))
  throw new Error("--rate, --seconds and --instances must be > 0");

/** Commits RATE changes/s, PER_TX per transaction, for SECONDS; resolves with how many it wrote. */
async function write(sql: Sql, prefix: string): Promise<number> {
  const txPerSecond = RATE / PER_TX;
  const started = performance.now();
  let written = 0;
  let version = 0;
  for (let i = 0; i < txPerSecond * SECONDS; i++) {
    const due = started + (i / txPerSecond) * 1000;
    const wait = due - performance.now();
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    version++;
    await sql.begin((tx) =>
      recordChanges(
        tx,
        Array.from({ length: PER_TX }, (_, k) => ({
          resource: "order" as const,
          resourceId: `ord_${prefix}_${(i * PER_TX + k) % ORDERS}`,
          merchantId: "mer_bench",
          operation: "update" as const,
          version,
          source: "webhook" as const,
        })),
      ),
    );
    written += PER_TX;
  }
  return written;
}

interface Figures {
  calls: number;
  callP50Ms: number;
  callP99Ms: number;
  rowsPerCall: number;
  lagP50Ms: number;
  lagP99Ms: number;
  handled: number;
  duplicates: number;
  written: number;
}

const summarize = (
  calls: number[],
  rows: number,
  lags: number[],
  handled: number[],
  written: number,
): Figures => ({
  calls: calls.length,
  callP50Ms: Math.round(percentile(calls, 50) * 10) / 10,
  callP99Ms: Math.round(percentile(calls, 99) * 10) / 10,
  rowsPerCall: Math.round((rows / Math.max(1, calls.length)) * 10) / 10,
  lagP50Ms: Math.round(percentile(lags, 50)),
  lagP99Ms: Math.round(percentile(lags, 99)),
  handled: new Set(handled).size,
  duplicates: handled.length - new Set(handled).size,
  written,
});

/** One reader with a plain cursor over read_changes. */
async function baseline(url: string): Promise<Figures> {
  const sql = connect(url, { max: 2 });
  try {
    const [head] = await sql<
      { p: string }[]
    >`select coalesce(max(position), 0)::text as p from replica.changes`;
    let after = Number(head!.p);
    const calls: number[] = [];
    const lags: number[] = [];
    const handled: number[] = [];
    let rows = 0;
    let total = Number.POSITIVE_INFINITY;
    const writer = write(sql, "base").then((n) => {
      total = n;
      return n;
    });
    // Until every change written was read, the tail too.
    while (handled.length < total) {
      const t = performance.now();
      const page = await sql<{ position: string; changed_at: Date }[]>`
        select position::text, changed_at from replica.read_changes(${after}, 100)`;
      calls.push(performance.now() - t);
      rows += page.length;
      const now = Date.now();
      for (const c of page) {
        lags.push(now - c.changed_at.getTime());
        handled.push(Number(c.position));
        after = Number(c.position);
      }
      if (page.length < 100) await new Promise((r) => setTimeout(r, 20));
    }
    return summarize(calls, rows, lags, handled, await writer);
  } finally {
    await sql.end();
  }
}

/** INSTANCES instances sharing one consumer: receive, then ack in a transaction of its own. */
async function consumers(url: string): Promise<Figures> {
  const admin = connect(url, { max: 2 });
  await admin`select replica.create_consumer('bench')`;
  const calls: number[] = [];
  const lags: number[] = [];
  const handled: number[] = [];
  let rows = 0;
  let writing = true;
  const writer = write(admin, "cons").finally(() => {
    writing = false;
  });
  let written = 0;
  const instance = async () => {
    const sql = connect(url, { max: 1 });
    try {
      for (;;) {
        const t = performance.now();
        const got = await sql<{ position: string; changed_at: Date }[]>`
          select position::text, changed_at from replica.receive_changes('bench', 100, 30)`;
        calls.push(performance.now() - t);
        rows += got.length;
        if (got.length > 0) {
          await sql.begin(
            (tx) => tx`select replica.ack_changes('bench', ${got.map((c) => c.position)}::bigint[])`,
          );
          const now = Date.now();
          for (const c of got) {
            lags.push(now - c.changed_at.getTime());
            handled.push(Number(c.position));
          }
        } else if (!writing && new Set(handled).size >= written) {
          return;
        } else {
          await new Promise((r) => setTimeout(r, 20));
        }
      }
    } finally {
      await sql.end();
    }
  };
  const instances = Array.from({ length: INSTANCES }, instance);
  written = await writer;
  await Promise.all(instances);
  await admin.end();
  return summarize(calls, rows, lags, handled, written);
}

const machine = await describeMachine();
const server = await openBenchServer();
try {
  const a = await server.createDatabase();
  const base = await baseline(a.url).finally(() => a.drop());
  const b = await server.createDatabase();
  const cons = await consumers(b.url).finally(() => b.drop());
  const row = (name: string, f: Figures) =>
    `${name.padEnd(34)} ${String(f.calls).padStart(6)} ${f.callP50Ms.toFixed(1).padStart(8)} ${f.callP99Ms
      .toFixed(1)
      .padStart(8)} ${String(f.rowsPerCall).padStart(6)} ${String(f.lagP50Ms).padStart(8)} ${String(
      f.lagP99Ms,
    ).padStart(8)} ${String(f.handled).padStart(7)}/${f.written} dup ${f.duplicates}`;
  console.log(
    `machine: ${machine.cores} cores, load ${formatLoad(machine)}; Postgres ${server.info.version}`,
  );
  console.log(`${RATE} changes/s for ${SECONDS} s`);
  console.log(
    "                                    calls  p50 ms   p99 ms  rows/c  lag p50  lag p99  handled",
  );
  console.log(row("read_changes, 1 reader (baseline)", base));
  console.log(row(`receive+ack, ${INSTANCES} instances`, cons));
  const result = {
    date: new Date().toISOString(),
    rate: RATE,
    seconds: SECONDS,
    instances: INSTANCES,
    machine,
    baseline: base,
    consumers: cons,
  };
  if (values.out) writeFileSync(values.out, `${JSON.stringify(result, null, 2)}\n`);
} finally {
  await server.close();
}
