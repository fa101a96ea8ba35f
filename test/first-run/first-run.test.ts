// What a new user does, for real: clone the repository into a fresh `mktemp -d` folder (0700, like a home
// directory), run the README's install, then the demo with no DATABASE_URL, so embedded PostgreSQL starts.
import { spawn } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";

const repository = path.resolve(import.meta.dirname, "../..");

function sh(
  command: string,
  args: string[],
  cwd: string,
  env: NodeJS.ProcessEnv,
): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd, env, stdio: ["ignore", "pipe", "pipe"] });
    let output = "";
    const collect = (chunk: Buffer) => {
      output += chunk.toString("utf8");
    };
    child.stdout.on("data", collect);
    child.stderr.on("data", collect);
    child.once("error", reject);
    child.once("close", (code) => resolve({ code, output }));
  });
}

/** The environment of a new user's shell: no database given, no test-run variables. */
function freshEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const name of Object.keys(env)) {
    if (/^(DATABASE_URL|TEST_DATABASE_URL|LOOPS_SYNC_|VITEST|NODE_OPTIONS|npm_)/.test(name)) delete env[name];
  }
  delete env.NODE_ENV;
  return env;
}

describe("first run from a fresh clone", () => {
  const cleanup: string[] = [];
  afterAll(async () => {
    for (const dir of cleanup) await rm(dir, { recursive: true, force: true });
  });

  it("installs and mirrors every upstream order in the demo, with DATABASE_URL unset", {
    timeout: 900_000,
  }, async () => {
    const home = await mkdtemp(path.join(tmpdir(), "loops-sync-first-run-"));
    cleanup.push(home);
    // A space in the path, as in many users' project folders.
    const checkout = path.join(home, "my projects", "loops-sync");
    const env = freshEnv();

    const clone = await sh("git", ["clone", "--quiet", "--no-hardlinks", repository, checkout], home, env);
    expect(clone.code, clone.output).toBe(0);
    const install = await sh("npx", ["-y", "pnpm@10", "install"], checkout, env);
    expect(install.code, install.output).toBe(0);
    const demo = await sh("npx", ["-y", "pnpm@10", "demo", "--duration", "10"], checkout, env);
    // A cluster moved out of the checkout (root, 0700 folder) is named in the log; it goes with the clone.
    const moved = /keeps its [^\n"]*data in (\/[^\s"]+)\/pg/.exec(demo.output)?.[1];
    if (moved) cleanup.push(moved);
    // As root the server runs as `postgres`, which cannot enter the 0700 folder: the move is said in the log.
    if (process.getuid?.() === 0) expect(moved, demo.output).toMatch(/^\/var\/lib\/loops-sync\//);

    expect(demo.code, demo.output).toBe(0);
    const summary = /mirrored (\d+) of (\d+) upstream orders/.exec(demo.output);
    expect(summary, demo.output).not.toBeNull();
    const [, mirrored, upstream] = summary!;
    expect(Number(upstream)).toBeGreaterThan(0);
    expect(Number(mirrored)).toBe(Number(upstream));
    expect(demo.output).not.toMatch(/\n\s+at .+:\d+:\d+\)?\n/);
  });
});
