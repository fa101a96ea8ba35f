// `pnpm bench:upgrade [--events N]`: the upgrade test's rolling upgrade from the previous release at a month's
// size (default 10M inbox rows: 35 days at 5 events/s less the retention margin), measured rather than judged.
// Prints how long the seed took, migrate's wall time and each step's, the longest wait of a webhook answer and
// of a reader of replica.orders in each phase, and webhooks/s accepted before, during and after; the "before"
// phase is the baseline of the same run. Writes bench/results/<date>-upgrade.json.

import { mkdirSync, readdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { runRollingUpgrade } from "#testkit/rolling-upgrade";
import { phaseFigures, refusedAnswers, slowWaits } from "#testkit/upgrade-report";
import { describeMachine, formatLoad } from "./machine.ts";

const { values } = parseArgs({
  options: {
    events: { type: "string", default: "10000000" },
    "orders-per-second": { type: "string", default: "4" },
    "old-on-new-seconds": { type: "string", default: "20" },
    "extra-migrations": { type: "string" },
    cache: { type: "boolean", default: false },
  },
});
const events = Number(values.events);
if (!Number.isInteger(events) || events < 1000) {
  console.error(`--events: got ${values.events}, expected a whole number of inbox rows, 1000 or more`);
  process.exit(2);
}
const serverUrl = process.env.DATABASE_URL;
if (!serverUrl) {
  console.error(
    "DATABASE_URL: unset; the bench needs a Postgres server (a superuser that may create databases)",
  );
  process.exit(2);
}

const machine = await describeMachine();
console.log(`upgrade bench: ${events.toLocaleString("en")} inbox rows; load ${formatLoad(machine)}`);
const report = await runRollingUpgrade({
  serverUrl,
  events,
  cacheHistory: values.cache,
  vacuumHistory: true,
  ordersPerSecond: Number(values["orders-per-second"]),
  // Each order's five events spread over five seconds: the baseline is measured at the full rate.
  warmupSeconds: 5,
  oldOnNewSeconds: Number(values["old-on-new-seconds"]),
  ...(values["extra-migrations"] ? { extraMigrations: values["extra-migrations"] } : {}),
  log: (line) => console.log(`  ${line.length > 400 ? `${line.slice(0, 400)}…` : line}`),
});

const phases = phaseFigures(report);
const migratePhase = phases.find((p) => p.phase === "migrate");
const result = {
  date: new Date().toISOString(),
  events,
  machine,
  release: report.release,
  /** Files applied on top of the tree's migrations (--extra-migrations), when any. */
  extraMigrations: values["extra-migrations"] ? readdirSync(values["extra-migrations"]) : [],
  seed: {
    seconds: round(report.seeded.seconds),
    steps: report.seeded.steps,
    orders: report.seeded.orders,
    changes: report.seeded.changes,
    databaseGiB: round(report.seeded.databaseBytes / 2 ** 30, 2),
    fromCache: report.seeded.fromCache,
  },
  migrate: {
    exitCode: report.migrate.exitCode,
    seconds: round(report.migrate.seconds),
    steps: report.migrate.steps,
    maxAnswerMs: migratePhase?.maxAnswerMs,
    maxReadMs: migratePhase?.maxReadMs,
  },
  migrateAgain: { exitCode: report.migrateAgain.exitCode, seconds: round(report.migrateAgain.seconds) },
  phases,
  refusedAnswers: refusedAnswers(report).length,
  waitsOverOneSecond: slowWaits(report, 1000),
  acceptedNotStored: report.acceptedNotStored.length,
  eventsNotStored: report.eventsNotStored.length,
  mirrorDifferences: report.mirrorProblems.length,
};

console.log(`\nseed: ${result.seed.seconds} s for ${events} events (${result.seed.databaseGiB} GiB)`);
console.log(`migrate: exit ${result.migrate.exitCode} in ${result.migrate.seconds} s`);
for (const s of report.migrate.steps)
  console.log(
    `  ${s.migration} step ${s.step} (${s.description}): ${(s.ms / 1000).toFixed(1)} s, ${s.tries} tries`,
  );
console.log("phase        seconds  webhooks/s  max answer ms  max read ms");
for (const p of phases)
  console.log(
    `${p.phase.padEnd(12)} ${String(p.seconds).padStart(7)}  ${String(p.acceptedPerSecond).padStart(10)}  ${String(p.maxAnswerMs).padStart(13)}  ${String(p.maxReadMs).padStart(11)}`,
  );
console.log(
  `non-2xx answers ${result.refusedAnswers}; waits over 1 s ${result.waitsOverOneSecond.length}; accepted but not stored ${result.acceptedNotStored}; mirror differences ${result.mirrorDifferences}; migrate again ${result.migrateAgain.seconds} s`,
);

const dir = path.join(path.dirname(fileURLToPath(import.meta.url)), "results");
mkdirSync(dir, { recursive: true });
const file = path.join(dir, `${result.date.slice(0, 10)}-upgrade.json`);
writeFileSync(file, `${JSON.stringify(result, null, 2)}\n`);
console.log(`written to ${path.relative(process.cwd(), file)}`);

function round(n: number, digits = 1): number {
  return Math.round(n * 10 ** digits) / 10 ** digits;
}
