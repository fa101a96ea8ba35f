// The whole test suite as the README and CI run it: lint, typecheck, then every vitest test
// (unit, real-Postgres integration, end-to-end), ending with the plain line `N passed, N failed`. The failed
// count takes in every reason the run fails: failed tests, files failing outside a test (a hook, an import),
// an unhandled error, a failed lint or typecheck step. The exit code is non-zero exactly when it is.
import { spawnSync } from "node:child_process";
import { mkdirSync, readFileSync, rmSync } from "node:fs";

const report = ".reports/vitest.json";
process.env.TURBO_TELEMETRY_DISABLED = "1";
mkdirSync(".reports", { recursive: true });
// A report left by an earlier run must not stand in for this one.
rmSync(report, { force: true });

function run(command: string, args: string[]): number {
  const result = spawnSync(command, args, { stdio: "inherit", env: process.env });
  return result.status ?? 1;
}

const extra = process.argv.slice(2);
let failedSteps = 0;
if (!process.env.SKIP_STATIC_CHECKS) {
  if (run("biome", ["check", "."]) !== 0) failedSteps++;
  if (run("turbo", ["run", "typecheck", "--output-logs=errors-only"]) !== 0) failedSteps++;
  if (run("tsc", ["-p", "tsconfig.json", "--noEmit"]) !== 0) failedSteps++;
}
const vitest = run("vitest", [
  "run",
  "--reporter=default",
  "--reporter=json",
  `--outputFile.json=${report}`,
  ...extra,
]);

interface VitestReport {
  numPassedTests: number;
  numFailedTests: number;
  testResults: { name: string; status: string; assertionResults: { status: string }[] }[];
}

let passed = 0;
let failed = 0;
const notes: string[] = [];
try {
  const json = JSON.parse(readFileSync(report, "utf8")) as VitestReport;
  passed = json.numPassedTests;
  failed = json.numFailedTests;
  // A file that failed with no failed test in it failed in a hook or while loading: one failure each.
  for (const file of json.testResults) {
    if (file.status === "failed" && !file.assertionResults.some((a) => a.status === "failed")) {
      failed++;
      notes.push(`${file.name}: failed outside its tests (a hook, or loading the file), see above`);
    }
  }
} catch {
  failed++;
  notes.push(`no report from vitest at ${report}, see above`);
}
if (vitest !== 0 && failed === 0) {
  // Vitest fails a run for an unhandled error or rejection even when every test passed.
  failed++;
  notes.push(`vitest exited ${vitest} with no failed test (an unhandled error), see above`);
}
if (passed === 0 && failed === 0) {
  failed++;
  notes.push("no test ran");
}
if (failedSteps > 0)
  notes.push(`static checks: ${failedSteps} step(s) failed (biome or typecheck), see above`);
failed += failedSteps;
for (const note of notes) console.log(note);
console.log(`${passed} passed, ${failed} failed`);
process.exit(failed > 0 ? 1 : 0);
