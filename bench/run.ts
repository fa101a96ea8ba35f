// `pnpm bench [--quick] [--only receiver,freshness,catchup]`: the one benchmark command. Creates its
// own database on DATABASE_URL's server (embedded when unset), measures every figure beside a baseline from
// the same run, prints one table and drops the database. See bench/README.md.
import { parseArgs } from "node:util";
import { type BenchDatabase, openBenchServer } from "./bench-database.ts";
import { describeMachine } from "./machine.ts";
import { type CatchupFigures, measureCatchup } from "./measure-catchup.ts";
import { type FreshnessFigures, measureFreshness } from "./measure-freshness.ts";
import { measureReceiver, type ReceiverFigures } from "./measure-receiver.ts";
import { measureTracing, printTracing, type TracingFigures } from "./measure-tracing.ts";
import { printTable } from "./print-table.ts";

const { values } = parseArgs({
  options: {
    quick: { type: "boolean", default: false },
    only: { type: "string" },
    seconds: { type: "string" },
    rate: { type: "string", default: "1000" },
    "worker-concurrency": { type: "string", default: "32" },
    events: { type: "string" },
    orders: { type: "string" },
    trace: { type: "boolean", default: false },
    "api-ms": { type: "string", default: "20" },
    help: { type: "boolean", short: "h", default: false },
  },
});
if (values.help) {
  console.log(`pnpm bench [options]
  --quick                   short run (under a minute): 3 s loads, 10,000-event backlog
  --only LIST               phases to run, comma-separated: receiver,freshness,catchup (default: these
                            three), tracing (OpenTelemetry off / 100 % / 1 %, alternating; not by default)
  --seconds N               seconds per measured load (default: 10; quick: 3)
  --rate N                  freshness event rate per second (default: 1000)
  --worker-concurrency N    WORKER_CONCURRENCY of the worker process (default: 32)
  --api-ms N                ms the sandbox takes to answer each API call (default: 20)
  --trace                   freshness: also print where the worker's jobs spend their time (slower)
  --events N, --orders N    catch-up backlog (default: 100000 events of 20000 orders; quick: 10000 / 2000)`);
  process.exit(0);
}
const quick = values.quick;
const seconds = Number(values.seconds ?? (quick ? 3 : 10));
const phases = new Set((values.only ?? "receiver,freshness,catchup").split(",").map((s) => s.trim()));
const workerConcurrency = Number(values["worker-concurrency"]);
const events = Number(values.events ?? (quick ? 10_000 : 100_000));
const orders = Number(values.orders ?? (quick ? 2_000 : 20_000));

const machineBefore = await describeMachine();
const server = await openBenchServer();
const failures: string[] = [];
/** Runs one phase on a database of its own; a failed phase is reported and the others still run. */
async function phase<T>(name: string, run: (db: BenchDatabase) => Promise<T>): Promise<T | undefined> {
  const db = await server.createDatabase();
  try {
    return await run(db);
  } catch (error) {
    failures.push(`${name}: ${error instanceof Error ? error.message : String(error)}`);
    return undefined;
  } finally {
    await db.drop();
  }
}

let receiver: ReceiverFigures | undefined;
let freshness: FreshnessFigures | undefined;
let catchup: CatchupFigures | undefined;
let tracing: TracingFigures | undefined;
const started = Date.now();
try {
  if (phases.has("receiver")) {
    console.error(
      `receiver: bare Hono, receiver (with and without LOOPS_APPLICATION_ID), raw INSERTs, ${seconds} s each…`,
    );
    receiver = await phase("receiver", (db) =>
      measureReceiver({ sql: db.sql, databaseUrl: db.url, seconds }),
    );
  }
  if (phases.has("freshness")) {
    console.error(
      `freshness: ${values.rate} events/s for ${seconds} s, API answers in ${values["api-ms"]} ms…`,
    );
    freshness = await phase("freshness", (db) =>
      measureFreshness({
        sql: db.sql,
        databaseUrl: db.url,
        rate: Number(values.rate),
        seconds,
        workerConcurrency,
        apiDelayMs: Number(values["api-ms"]),
        trace: values.trace,
      }),
    );
  }
  if (phases.has("tracing")) {
    console.error(
      `tracing: receiver${quick ? "" : " and freshness"} with tracing off, 100 %, 1 %, alternating…`,
    );
    tracing = await phase("tracing", () =>
      measureTracing({
        withDatabase: async (fn) => {
          const db = await server.createDatabase();
          try {
            return await fn(db);
          } finally {
            await db.drop();
          }
        },
        seconds,
        freshness: quick
          ? undefined
          : { rate: Number(values.rate), workerConcurrency, apiDelayMs: Number(values["api-ms"]) },
      }),
    );
  }
  if (phases.has("catchup")) {
    console.error(`catch-up: backlog of ${events} events of ${orders} orders…`);
    catchup = await phase("catchup", (db) =>
      measureCatchup({
        sql: db.sql,
        databaseUrl: db.url,
        events,
        orders,
        workerConcurrency,
        apiDelayMs: Number(values["api-ms"]),
      }),
    );
  }
} finally {
  await server.close();
}
const machineAfter = await describeMachine();
printTable({
  machineBefore,
  machineAfter,
  database: server.info,
  embedded: server.embedded,
  wallSeconds: (Date.now() - started) / 1000,
  receiver,
  freshness,
  catchup,
});
if (tracing) printTracing(tracing);
for (const failure of failures) console.log(`FAILED ${failure}`);
if (failures.length > 0) process.exitCode = 1;
