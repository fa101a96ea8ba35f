// Forwarding figures (README "Forwarding changes to your endpoint"; docs/decisions.md "Forwarding claims
// deliveries by lease"). Run: DATABASE_URL=postgres://… node bench/forward.ts [--changes N] [--seconds S]
// 1. apply rate: changes committed by a writer that upserts a mirrored row and records its change, 10 per
//    transaction (what an apply does), with nothing forwarding: the baseline;
// 2. forwarding throughput: those changes delivered as a backlog to a loopback endpoint answering at once;
// 3. the apply rate again while the forwarder runs (its cost to the writers);
// 4. lag from a change's commit (changed_at) to its 2xx, at 500 changes/s.
import { parseArgs } from "node:util";
import { createLogger } from "@loops-sync/config";
import { recordChanges, type Sql } from "@loops-sync/db";
import { type Forwarder, startForwarder } from "@loops-sync/worker";
import { startForwardEndpoint } from "#testkit/forward-endpoint";
import { waitFor } from "#testkit/wait-for";
import { openBenchServer } from "./bench-database.ts";
import { describeMachine, formatLoad } from "./machine.ts";
import { percentile } from "./percentile.ts";

const { values } = parseArgs({
  options: {
    changes: { type: "string", default: "5000" },
    seconds: { type: "string", default: "10" },
    "in-flight": { type: "string", default: "64" },
  },
});
const CHANGES = Number(values.changes);
const LAG_SECONDS = Number(values.seconds);
const PER_TX = 10;
const RESOURCES = 1000;
const SECRET = `whsec_${Buffer.from("forward-bench-secret-0123456789ab").toString("base64")}`;
let next = 0;

/** One apply: PER_TX channel rows upserted and their changes recorded, in one transaction. */
async function applyOnce(sql: Sql): Promise<void> {
  const ids = Array.from({ length: PER_TX }, () => `chn_${next++ % RESOURCES}`);
  await sql.begin(async (tx) => {
    await tx`
      insert into replica.channels (id, raw)
      select id, jsonb_build_object('id', id, 'name', 'bench') from unnest(${ids}::text[]) as id
      on conflict (id) do update set raw = excluded.raw, synced_at = now()`;
    await recordChanges(
      tx,
      ids.map((id) => ({
        resource: "channel" as const,
        resourceId: id,
        merchantId: null,
        operation: "update" as const,
        source: "reconcile" as const,
      })),
    );
  });
}

/** Changes/s of `count` changes applied by 4 writers as fast as they go. */
async function applyBurst(sql: Sql, count: number): Promise<number> {
  const started = performance.now();
  let left = count / PER_TX;
  await Promise.all(
    Array.from({ length: 4 }, async () => {
      while (left-- > 0) await applyOnce(sql);
    }),
  );
  return count / ((performance.now() - started) / 1000);
}

const machineBefore = await describeMachine();
const server = await openBenchServer();
const db = await server.createDatabase();
const endpoint = await startForwardEndpoint({ secret: SECRET });
const logger = createLogger({ name: "bench-forward", level: "warn" });
let forwarder: Forwarder | undefined;
try {
  // Forward from the very first change, so phase 1's changes are a backlog.
  await db.sql`insert into sync.forward_progress (scanned_through) values (0)`;
  const applyAlone = await applyBurst(db.sql, CHANGES);

  const started = performance.now();
  forwarder = await startForwarder({
    sql: db.sql,
    url: endpoint.url,
    secret: SECRET,
    logger,
    maxInFlight: Number(values["in-flight"]),
  });
  const delivered = (n: number) => () => endpoint.accepted().length >= n;
  await waitFor(delivered(CHANGES), { timeoutMs: 120_000, intervalMs: 10, what: "the backlog delivered" });
  const forwardRate = CHANGES / ((performance.now() - started) / 1000);

  const applyWhileForwarding = await applyBurst(db.sql, CHANGES);
  await waitFor(delivered(2 * CHANGES), { timeoutMs: 120_000, what: "the second burst delivered" });

  const before = endpoint.requests.length;
  const rate = 500;
  const t0 = performance.now();
  // Each apply starts on its schedule, not after the previous one's commit (up to 8 at once), so a slow
  // commit on this loaded machine does not lower the rate.
  const outstanding = new Set<Promise<void>>();
  for (let i = 0; i < (rate / PER_TX) * LAG_SECONDS; i++) {
    const due = t0 + (i * 1000 * PER_TX) / rate;
    const wait = due - performance.now();
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    if (outstanding.size >= 8) await Promise.race(outstanding);
    const apply = applyOnce(db.sql).finally(() => outstanding.delete(apply));
    outstanding.add(apply);
  }
  await Promise.all(outstanding);
  const paced = rate * LAG_SECONDS;
  await waitFor(delivered(2 * CHANGES + paced), { timeoutMs: 60_000, what: "the paced changes delivered" });
  const lags = endpoint.requests
    .slice(before)
    .filter((r) => r.status < 300)
    .map((r) => r.answeredAt - Date.parse(String(r.body.changed_at)));
  const achieved = paced / ((performance.now() - t0) / 1000);
  const duplicates = endpoint.requests.length - new Set(endpoint.requests.map((r) => r.webhookId)).size;

  const machineAfter = await describeMachine();
  const f = (n: number) => n.toLocaleString("en-US", { maximumFractionDigits: 1 });
  console.log(
    `forward bench: ${machineBefore.cores} cores, ${machineBefore.cpuModel}, Node ${machineBefore.node}, Postgres ${server.info.version}`,
  );
  console.log(`load before ${formatLoad(machineBefore)}, after ${formatLoad(machineAfter)} (shared machine)`);
  console.table([
    { figure: "apply rate, nothing forwarding (baseline)", value: `${f(applyAlone)} changes/s` },
    {
      figure: "forwarding throughput, backlog, endpoint answers at once",
      value: `${f(forwardRate)} changes/s`,
      ratio: f(forwardRate / applyAlone),
    },
    {
      figure: "apply rate while forwarding",
      value: `${f(applyWhileForwarding)} changes/s`,
      ratio: f(applyWhileForwarding / applyAlone),
    },
    {
      figure: `lag commit → 2xx at ${rate}/s (achieved ${f(achieved)}/s) p50`,
      value: `${f(percentile(lags, 50))} ms`,
    },
    { figure: "lag commit → 2xx p99", value: `${f(percentile(lags, 99))} ms` },
    { figure: "duplicates", value: String(duplicates) },
  ]);
} finally {
  await forwarder?.stop(1000);
  await endpoint.close();
  await db.drop();
  await server.close();
}
