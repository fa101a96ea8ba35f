// scripts/test.ts on a small throwaway project: every way a run fails shows in the closing line's failed count.
import { spawn } from "node:child_process";
import { mkdtemp, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";

const repository = path.resolve(import.meta.dirname, "../..");
const script = path.join(repository, "scripts/test.ts");
const projects: string[] = [];

async function project(files: Record<string, string>): Promise<string> {
  const dir = await mkdtemp(path.join(tmpdir(), "loops-sync-closing-line-"));
  projects.push(dir);
  await symlink(path.join(repository, "node_modules"), path.join(dir, "node_modules"));
  await writeFile(
    path.join(dir, "vitest.config.ts"),
    'import { defineConfig } from "vitest/config";\nexport default defineConfig({ test: { include: ["*.test.ts"] } });\n',
  );
  for (const [name, text] of Object.entries(files)) await writeFile(path.join(dir, name), text);
  return dir;
}

/** Runs the script as `pnpm test` does, with the repository's tools on PATH and no outer vitest around it. */
function runTestScript(
  cwd: string,
  skipStatic: boolean,
): Promise<{ code: number | null; lastLine: string; output: string }> {
  const env: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(process.env))
    if (!/^(VITEST|TEST$|NODE_OPTIONS)/.test(name)) env[name] = value;
  env.PATH = `${path.join(repository, "node_modules/.bin")}:${process.env.PATH}`;
  if (skipStatic) env.SKIP_STATIC_CHECKS = "1";
  else delete env.SKIP_STATIC_CHECKS;
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [script], { cwd, env, stdio: ["ignore", "pipe", "pipe"] });
    let output = "";
    const collect = (chunk: Buffer) => {
      output += chunk.toString("utf8");
    };
    child.stdout.on("data", collect);
    child.stderr.on("data", collect);
    child.once("error", reject);
    child.once("close", (code) => {
      const lines = output.trimEnd().split("\n");
      resolve({ code, lastLine: lines.at(-1) ?? "", output });
    });
  });
}

function failedCount(lastLine: string): number {
  const match = /^(\d+) passed, (\d+) failed$/.exec(lastLine);
  expect(match, `closing line: ${lastLine}`).not.toBeNull();
  return Number(match![2]);
}

const passing = 'import { expect, it } from "vitest";\nit("passes", () => expect(1).toBe(1));\n';

describe("the closing line of scripts/test.ts", { timeout: 120_000 }, () => {
  afterEach(async () => {
    for (const dir of projects.splice(0)) await rm(dir, { recursive: true, force: true });
  });

  it("counts a file that failed in a hook", async () => {
    const dir = await project({
      "ok.test.ts": passing,
      "hook.test.ts":
        'import { beforeAll, expect, it } from "vitest";\nbeforeAll(() => { throw new Error("setup broke"); });\nit("never runs", () => expect(1).toBe(1));\n',
    });
    const run = await runTestScript(dir, true);
    expect(run.code, run.output).not.toBe(0);
    expect(failedCount(run.lastLine), run.output).toBeGreaterThan(0);
  });

  it("counts an unhandled error while every test passed", async () => {
    const dir = await project({
      "unhandled.test.ts":
        'import { expect, it } from "vitest";\nit("passes but leaves a rejection", async () => {\n  void Promise.reject(new Error("nobody caught this"));\n  await new Promise((r) => setTimeout(r, 50));\n  expect(1).toBe(1);\n});\n',
    });
    const run = await runTestScript(dir, true);
    expect(run.code, run.output).not.toBe(0);
    expect(failedCount(run.lastLine), run.output).toBeGreaterThan(0);
  });

  it("counts a failed lint step while every test passed", async () => {
    const dir = await project({ "ok.test.ts": passing, "lint.ts": "export var answer = 42; debugger;\n" });
    const run = await runTestScript(dir, false);
    expect(run.code, run.output).not.toBe(0);
    expect(failedCount(run.lastLine), run.output).toBeGreaterThan(0);
  });

  it("ends a clean run with 0 failed and exit 0", async () => {
    const dir = await project({ "ok.test.ts": passing });
    const run = await runTestScript(dir, true);
    expect(run.lastLine, run.output).toBe("1 passed, 0 failed");
    expect(run.code, run.output).toBe(0);
  });
});
