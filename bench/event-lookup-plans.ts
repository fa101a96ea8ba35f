// Plans that do not rot: the worker's hot-path statements that look events up by id in sync.events (the
// applier's upsert naming the events it answers, then the settle of those events), each in a transaction as
// the worker runs them, on connections whose prepared statements were planned while the table was empty, as
// a fresh install flooded at once would. sync.events is then flooded past --rows (default 1,200,000)
// without a manual ANALYZE, and at each size the same transactions are timed and their plans shown
// (auto_explain at NOTICE level: the plan each execution really used). Two connections, same run:
// `cached` (the statements alone: Postgres may keep a generic plan made for the empty table) is the
// baseline; `current` starts each transaction with planForCurrentSize, as the worker and catch-up now do.
// Flat is the goal: the nodes reading sync.events stay key lookups and the time per call stays near the
// empty table's.
//
//   DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres node bench/event-lookup-plans.ts [--rows 1200000]

import { parseArgs } from "node:util";
import { planForCurrentSize, type Sql, settleCoveredOrderEvents } from "@loops-sync/db";
import { applyOrdersIfNewer } from "@loops-sync/replica";
import postgres from "postgres";
import { openBenchServer } from "./bench-database.ts";
import { percentile } from "./percentile.ts";

const { values } = parseArgs({
  options: { rows: { type: "string", default: "1200000" }, calls: { type: "string", default: "60" } },
});
const totalRows = Number(values.rows);
const calls = Number(values.calls);
const CHUNK = 100_000;
const SIZES = [0, 10_000, 100_000, 300_000, 600_000, 1_000_000, totalRows].filter(
  (n, i, all) => n <= totalRows && all.indexOf(n) === i,
);

const server = await openBenchServer();
const db = await server.createDatabase();
type Variant = "cached" | "current";
const plans: Record<Variant, string[]> = { cached: [], current: [] };
// One connection per variant, prepared statements on (as the worker's pool), its notices kept: the plans.
const open = (variant: Variant) =>
  postgres(db.url, {
    max: 1,
    prepare: true,
    onnotice: (n) => {
      if (typeof n.message === "string" && n.message.includes("sync.events")) plans[variant].push(n.message);
    },
    types: { bigint: { to: 20, from: [20], serialize: String, parse: Number } },
  }) as unknown as Sql;
const conns: Record<Variant, Sql> = { cached: open("cached"), current: open("current") };
const sql = conns.cached;

let orderSeq = 0;
/** One order as the API answers it, and three stored events that name it (pending, as the queue has them). */
async function freshOrder() {
  const id = `ord_probe_${orderSeq++}`;
  const at = new Date().toISOString();
  const order = {
    id,
    merchant_id: "mer_bench",
    location_id: "loc_bench",
    channel: "hungerstation",
    type: "delivery",
    status: "accepted",
    version: 3,
    currency: "SAR",
    totals: { total: { amount: 1000, currency: "SAR" } },
    items: [],
    status_history: [],
    created_at: at,
    updated_at: at,
  };
  const eventIds = [1, 2, 3].map((v) => `evt_probe_${id}_${v}`);
  await sql`
    insert into sync.events (id, type, merchant_id, created_at, source, payload)
    select e, 'order.status_changed', 'mer_bench', now(), 'webhook',
           jsonb_build_object('id', e, 'data', jsonb_build_object('order_id', ${id}::text, 'version', v))
    from unnest(${eventIds}::text[]) with ordinality as t(e, v)`;
  return { order, eventIds };
}

/** Up to `calls` applier commits, each: upsert naming its events, then settle them; ms per call (the first's plan). */
async function probe(variant: Variant, explain: boolean): Promise<number[]> {
  const conn = conns[variant];
  const times: number[] = [];
  const begun = performance.now();
  // At most about 10 s per size and variant (a rotten plan takes seconds per call at 1M rows).
  for (let i = 0; i < calls && (i < 5 || performance.now() - begun < 10_000); i++) {
    const { order, eventIds } = await freshOrder();
    const last = explain && i === 0;
    if (last) await conn`set auto_explain.log_min_duration = 0`;
    const started = performance.now();
    await conn.begin(async (tx) => {
      if (variant === "current") void planForCurrentSize(tx);
      await applyOrdersIfNewer(tx, [order], [{ eventIds }]);
      await settleCoveredOrderEvents(tx, {
        events: eventIds.map((eventId) => ({ eventId, versionBefore: null, receivedBefore: null })),
      });
    });
    times.push(performance.now() - started);
    if (last) await conn`set auto_explain.log_min_duration = -1`;
  }
  return times;
}

/** The plan lines that read sync.events, shortened. */
const eventNodes = (plan: string) =>
  [
    ...new Set(
      plan
        .split("\n")
        .filter((l) => /on events\b/.test(l) && /Scan/.test(l))
        .map((l) =>
          l
            .trim()
            .replace(/^->\s*/, "")
            .replace(/\s+\(.*$/, ""),
        ),
    ),
  ].join("; ");

for (const conn of Object.values(conns)) {
  await conn`load 'auto_explain'`;
  await conn`set auto_explain.log_level = notice`;
  await conn`set auto_explain.log_nested_statements = on`;
  await conn`set auto_explain.log_min_duration = -1`;
}
// Planned while the table is empty: more than five executions, so generic plans may be cached.
for (const variant of ["cached", "current"] as const) await probe(variant, false);

interface Row {
  variant: Variant;
  events: number;
  p50: number;
  p95: number;
  ratio: number;
  plan: string;
}
const rows: Row[] = [];
let inserted = 0;
for (const size of SIZES) {
  while (inserted < size) {
    const n = Math.min(CHUNK, size - inserted);
    await db.sql`
      insert into sync.events (id, type, merchant_id, created_at, source, payload, outcome, outcome_at)
      select 'evt_flood_' || g, 'order.status_changed', 'mer_flood_' || (g % 50), now(), 'webhook',
             jsonb_build_object('id', 'evt_flood_' || g,
                                'data', jsonb_build_object('order_id', 'ord_flood_' || (g / 4), 'version', g % 4 + 1)),
             'applied', now()
      from generate_series(${inserted + 1}::bigint, ${inserted + n}::bigint) as g`;
    inserted += n;
  }
  const [stats] = await db.sql<{ reltuples: number }[]>`
    select reltuples::float8 as reltuples from pg_class where oid = 'sync.events'::regclass`;
  for (const variant of ["cached", "current"] as const) {
    plans[variant].length = 0;
    const times = await probe(variant, true);
    const p50 = percentile(times, 50);
    const first = rows.find((r) => r.variant === variant);
    const row: Row = {
      variant,
      events: inserted + orderSeq * 3,
      p50,
      p95: percentile(times, 95),
      ratio: first ? p50 / first.p50 : 1,
      plan: plans[variant].map(eventNodes).filter(Boolean).join(" | "),
    };
    rows.push(row);
    console.log(
      `${variant.padEnd(7)} ${String(row.events).padStart(9)} events (reltuples ${Math.round(stats?.reltuples ?? 0)}): ` +
        `p50 ${row.p50.toFixed(2)} ms, p95 ${row.p95.toFixed(2)} ms, ×${row.ratio.toFixed(2)} of its first; ${row.plan}`,
    );
  }
}
for (const conn of Object.values(conns)) await conn.end();

await db.drop();
await server.close();
console.log(JSON.stringify({ calls, rows }));
