// Prints the table of a release's online migrations for docs/upgrading.md: each step, how it runs, the lock it
// takes on which table and for how long. From `loops-sync migrate --plan --json` on stdin (run against a
// database of the previous release), or, with nothing on stdin, from every migration file from 0025 on.
//   node scripts/upgrade-table.ts                         # print, from the files
//   loops-sync migrate --plan --json | node scripts/upgrade-table.ts
//   node scripts/upgrade-table.ts --write 0.2.0           # replace the table between the markers of 0.2.0
import { readFile, writeFile } from "node:fs/promises";
import { text } from "node:stream/consumers";
import {
  FIRST_ONLINE_MIGRATION,
  type MigrationPlan,
  type PlannedStep,
  planSteps,
  readMigrations,
} from "@loops-sync/db";

const DOC = new URL("../docs/upgrading.md", import.meta.url);

type Lock = PlannedStep["locks"][number];

/** How long the lock keeps others out, in words an operator plans with. */
function held(lock: Lock, mode: PlannedStep["mode"]): string {
  if (lock.lock === "none") return "nothing on existing tables";
  if (lock.lock === "unknown") return "unknown: read the step";
  if (lock.holds === "brief") return "waits ≤ 0.5 s a try (retried), then milliseconds: a catalog change";
  if (lock.holds === "batched") return "row locks of one batch at a time, each its own transaction";
  if (mode === "concurrently") return "blocks no read or write; the build reads the whole table";
  if (lock.holds === "scans" || lock.holds === "rewrites")
    return `the whole table (${lock.holds}): not online`;
  return "for its statement";
}

function renderTable(plan: MigrationPlan): string {
  const rows = ["| migration | step | runs as | lock | held |", "|---|---|---|---|---|"];
  for (const step of plan.steps) {
    for (const lock of step.locks) {
      const on = lock.table ? ` on \`${lock.table}\`` : "";
      rows.push(
        `| ${step.migration} | ${step.step}/${step.steps} ${step.description} | ${step.mode} | ${lock.lock}${on} (${lock.statement}) | ${held(lock, step.mode)} |`,
      );
    }
  }
  return rows.length > 2 ? rows.join("\n") : "No migration from 0025 on yet.";
}

const piped = process.stdin.isTTY ? "" : (await text(process.stdin)).trim();
const plan: MigrationPlan = piped
  ? JSON.parse(piped)
  : planSteps((await readMigrations()).filter((f) => f.id >= FIRST_ONLINE_MIGRATION));
const table = renderTable(plan);
const release = process.argv[process.argv.indexOf("--write") + 1];
if (process.argv.includes("--write") && release) {
  const start = `<!-- upgrade-table ${release} -->`;
  const end = `<!-- /upgrade-table ${release} -->`;
  const doc = await readFile(DOC, "utf8");
  const [before, rest] = doc.split(start);
  const after = rest?.split(end)[1];
  if (before === undefined || after === undefined)
    throw new Error(`docs/upgrading.md has no ${start} … ${end}`);
  await writeFile(DOC, `${before}${start}\n${table}\n${end}${after}`);
} else {
  process.stdout.write(`${table}\n`);
}
