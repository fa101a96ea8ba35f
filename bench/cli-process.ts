import { type ChildProcess, spawn } from "node:child_process";
import { readFile } from "node:fs/promises";
import { createInterface } from "node:readline";

const MAIN = new URL("../apps/cli/src/main.ts", import.meta.url).pathname;
/** The Node flags bin/loops-sync (and the image's NODE_OPTIONS) start every loops-sync process with. */
export const PRODUCT_NODE_FLAGS = ["--max-semi-space-size=8", "--max-old-space-size=128"];

export interface CliProcess {
  child: ChildProcess;
  pid: number;
  /** Every log line parsed so far (pino JSON), newest last; non-JSON lines are kept as `{ msg }`. */
  lines: Record<string, unknown>[];
  /** Resolves with the first line (already seen or still to come) that `match` accepts. */
  waitForLine(
    match: (line: Record<string, unknown>) => boolean,
    timeoutMs?: number,
  ): Promise<Record<string, unknown>>;
  /** Resolves with the exit code. */
  exited: Promise<number | null>;
  /** SIGTERM, then waits for the exit (SIGKILL after `graceMs`). */
  stop(graceMs?: number): Promise<number | null>;
}

/**
 * Runs one `loops-sync` command as its own process (the same entry point users run), so its memory is its
 * own and can be read from /proc. Log lines stay in memory for the bench to wait on.
 */
export function startCliProcess(
  args: string[],
  env: Record<string, string>,
  /** Default: the loops-sync entry point (apps/cli/src/main.ts). */
  script: string = MAIN,
): CliProcess {
  const child = spawn(process.execPath, [...PRODUCT_NODE_FLAGS, script, ...args], {
    env: { ...process.env, ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  const lines: Record<string, unknown>[] = [];
  const waiters: {
    match: (l: Record<string, unknown>) => boolean;
    resolve: (l: Record<string, unknown>) => void;
  }[] = [];
  const onLine = (text: string) => {
    let line: Record<string, unknown>;
    try {
      line = JSON.parse(text) as Record<string, unknown>;
    } catch {
      line = { msg: text };
    }
    if (process.env.BENCH_VERBOSE) process.stderr.write(`[${args[0]}] ${text}\n`);
    // Keep memory bounded on long runs; the bench only waits on start-up and summary lines.
    if (lines.length < 5000) lines.push(line);
    for (const w of [...waiters]) {
      if (w.match(line)) {
        waiters.splice(waiters.indexOf(w), 1);
        w.resolve(line);
      }
    }
  };
  createInterface({ input: child.stdout! }).on("line", onLine);
  createInterface({ input: child.stderr! }).on("line", onLine);
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));

  return {
    child,
    pid: child.pid!,
    lines,
    exited,
    waitForLine(match, timeoutMs = 60_000) {
      const seen = lines.find(match);
      if (seen) return Promise.resolve(seen);
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => {
          const tail = lines
            .slice(-5)
            .map((l) => JSON.stringify(l))
            .join("\n");
          reject(
            new Error(`loops-sync ${args[0]}: no expected line within ${timeoutMs} ms; last lines:\n${tail}`),
          );
        }, timeoutMs);
        waiters.push({
          match,
          resolve: (l) => {
            clearTimeout(timer);
            resolve(l);
          },
        });
        void exited.then((code) => {
          clearTimeout(timer);
          const tail = lines
            .slice(-5)
            .map((l) => JSON.stringify(l))
            .join("\n");
          reject(new Error(`loops-sync ${args[0]} exited with ${code}; last lines:\n${tail}`));
        });
      });
    },
    async stop(graceMs = 15_000) {
      if (child.exitCode !== null || child.signalCode !== null) return child.exitCode;
      child.kill("SIGTERM");
      const timer = setTimeout(() => child.kill("SIGKILL"), graceMs);
      const code = await exited;
      clearTimeout(timer);
      return code;
    },
  };
}

/** Peak and current resident memory of a live process, in bytes (VmHWM and VmRSS of /proc/<pid>/status). */
export async function readMemory(pid: number): Promise<{ peak: number; current: number } | undefined> {
  try {
    const status = await readFile(`/proc/${pid}/status`, "utf8");
    const kb = (name: string) => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, "m").exec(status)?.[1] ?? 0);
    return { peak: kb("VmHWM") * 1024, current: kb("VmRSS") * 1024 };
  } catch {
    return undefined;
  }
}
