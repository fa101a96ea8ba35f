// The whole test suite as the README and CI run it: lint, typecheck, then every vitest test
// (unit, real-Postgres integration, end-to-end), ending with the plain line `N passed, N failed`.
import { spawnSync } from "node:child_process";
import { mkdirSync, readFileSync } from "node:fs";

const report = ".reports/vitest.json";
process.env.TURBO_TELEMETRY_DISABLED = "1";
mkdirSync(".reports", { recursive: true });

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

let passed = 0;
let failed = 0;
try {
  const json = JSON.parse(readFileSync(report, "utf8")) as { numPassedTests: number; numFailedTests: number };
  passed = json.numPassedTests;
  failed = json.numFailedTests;
} catch {
  failed = Math.max(1, failed);
}
if (failedSteps > 0)
  console.log(`static checks: ${failedSteps} step(s) failed (biome or typecheck), see above`);
console.log(`${passed} passed, ${failed} failed`);
process.exit(vitest !== 0 || failedSteps > 0 || failed > 0 || passed === 0 ? 1 : 0);
