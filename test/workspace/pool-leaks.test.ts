import { execFile } from "node:child_process";
import { readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { expect, it } from "vitest";

const root = fileURLToPath(new URL("../../", import.meta.url));

interface Report {
  testResults: { assertionResults: { title: string; status: string; failureMessages: string[] }[] }[];
}

// The fixture runs in a vitest of its own: a failing afterEach there must not fail this file.
it("fails exactly the test that left its pool open, naming the pool", async () => {
  const out = path.join(tmpdir(), `pool-leaks-${process.pid}.json`);
  await promisify(execFile)(
    "npx",
    [
      "vitest",
      "run",
      "--config",
      "test/support/pool-leak-fixture/vitest-config.ts",
      "--reporter=json",
      `--outputFile=${out}`,
    ],
    { cwd: root },
  ).catch(() => {}); // exits 1: one test fails by design
  const report = JSON.parse(await readFile(out, "utf8")) as Report;
  await rm(out, { force: true });
  const results = report.testResults.flatMap((file) => file.assertionResults);
  expect(Object.fromEntries(results.map((r) => [r.title, r.status]))).toEqual({
    "closes its pool in its own afterEach": "passed",
    "leaks its pool": "failed",
    "closes its pool in the test": "passed",
  });
  const leak = results.find((r) => r.title === "leaks its pool")!;
  expect(leak.failureMessages.join("\n")).toMatch(
    /1 database pool\(s\) made by this test were still open[\s\S]*leaky/,
  );
});
