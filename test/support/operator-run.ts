import { spawn } from "node:child_process";
import path from "node:path";

/** The real command; LOOPS_SYNC_TEST_BIN may name another entry (a build under test). */
export const bin =
  process.env.LOOPS_SYNC_TEST_BIN ?? path.resolve(import.meta.dirname, "../../bin/loops-sync");

export interface RunResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/**
 * Runs `loops-sync` as the operator would, without blocking this process (a sandbox serving the child's
 * calls lives in it). Only PATH and HOME are inherited, so the child sees exactly the environment given.
 */
export function runCli(
  args: string[],
  env: Record<string, string> = {},
  timeoutMs = 30_000,
  cwd?: string,
): Promise<RunResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(bin, args, {
      ...(cwd ? { cwd } : {}),
      env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "/tmp", LOG_LEVEL: "silent", ...env },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString("utf8")));
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString("utf8")));
    const timer = setTimeout(() => child.kill("SIGKILL"), timeoutMs);
    child.once("error", reject);
    child.once("close", (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}
