// Spawns `bin/loops-sync` commands as child processes for the chaos, hostile and multi-process suites.
// Every child gets its own process group (so SIGKILL reaches it whatever it spawned) and its stdout and
// stderr appended to a file under .reports/logs/, which the secrets suite scans afterwards.

import { type ChildProcess, spawn } from "node:child_process";
import { createWriteStream, mkdirSync, type WriteStream, writeFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

export const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
/** Where every child's output lands; the secrets suite reads every file here. */
export const LOG_DIR = path.join(REPO_ROOT, ".reports", "logs");

export interface SpawnOptions {
  /** Name in the log file and in error messages, e.g. "worker-2". */
  name: string;
  /** `loops-sync` arguments, e.g. ["worker"]. */
  args: string[];
  /** Added to a minimal environment (PATH, HOME); nothing else of the test process leaks in. */
  env: Record<string, string>;
  /** File the output is appended to. Default: `${LOG_DIR}/${name}.log`. */
  logFile?: string;
  /** The checkout whose `bin/loops-sync` runs (another release's worktree). Default: this repository. */
  root?: string;
}

export interface LoopsSyncProcess {
  readonly name: string;
  readonly pid: number;
  readonly logFile: string;
  /** Resolves when the process has exited (never rejects). */
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** True until the process has exited. */
  alive(): boolean;
  /** Resolves with the first output line matching `pattern` (earlier lines included). */
  waitForLine(pattern: RegExp, timeoutMs?: number): Promise<string>;
  /** The last `n` output lines, stderr's prefixed "[stderr] ": what a failure message shows. */
  lastLines(n?: number): string[];
  /** Sends `signal` to the whole process group and waits for the exit. */
  kill(signal?: NodeJS.Signals, timeoutMs?: number): Promise<void>;
}

/** Tracks every child it spawned so afterAll can kill them all, even after a failure. */
export class ProcessGroup {
  readonly #children = new Set<LoopsSyncProcess>();
  readonly #streams: WriteStream[] = [];

  spawn({
    name,
    args,
    env,
    logFile = path.join(LOG_DIR, `${name}.log`),
    root = REPO_ROOT,
  }: SpawnOptions): LoopsSyncProcess {
    mkdirSync(path.dirname(logFile), { recursive: true });
    const out = createWriteStream(logFile, { flags: "a" });
    this.#streams.push(out);
    const child: ChildProcess = spawn(path.join(root, "bin", "loops-sync"), args, {
      cwd: root,
      env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "/tmp", ...env },
      detached: true,
      stdio: ["ignore", "pipe", "pipe"],
    });
    if (child.pid === undefined) throw new Error(`could not spawn loops-sync ${args.join(" ")} (${name})`);
    const pid = child.pid;
    const lines: string[] = [];
    const waiters = new Set<{ pattern: RegExp; resolve: (line: string) => void }>();
    let exitedYet = false;
    const onChunk = (prefix: string) => {
      let rest = "";
      return (chunk: Buffer) => {
        out.write(chunk);
        const text = rest + chunk.toString("utf8");
        const parts = text.split("\n");
        rest = parts.pop() ?? "";
        for (const line of parts) {
          lines.push(`${prefix}${line}`);
          for (const w of waiters) {
            if (w.pattern.test(line)) {
              waiters.delete(w);
              w.resolve(line);
            }
          }
        }
      };
    };
    child.stdout?.on("data", onChunk(""));
    child.stderr?.on("data", onChunk("[stderr] "));
    const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
      child.once("exit", (code, signal) => {
        exitedYet = true;
        resolve({ code, signal });
      });
    });
    const handle: LoopsSyncProcess = {
      name,
      pid,
      logFile,
      exited,
      alive: () => !exitedYet,
      lastLines: (n = 15) => lines.slice(-n),
      waitForLine(pattern, timeoutMs = 30_000) {
        const seen = lines.find((l) => pattern.test(l));
        if (seen) return Promise.resolve(seen);
        return new Promise((resolve, reject) => {
          const waiter = { pattern, resolve };
          const timer = setTimeout(() => {
            waiters.delete(waiter);
            reject(
              new Error(
                `${name}: no output line matching ${pattern} within ${timeoutMs} ms; last lines:\n${lines.slice(-15).join("\n")}`,
              ),
            );
          }, timeoutMs);
          waiter.resolve = (line) => {
            clearTimeout(timer);
            resolve(line);
          };
          waiters.add(waiter);
          void exited.then(({ code, signal }) => {
            if (!waiters.has(waiter)) return;
            waiters.delete(waiter);
            clearTimeout(timer);
            reject(
              new Error(
                `${name} exited (code ${code}, signal ${signal}) before printing ${pattern}; last lines:\n${lines.slice(-15).join("\n")}`,
              ),
            );
          });
        });
      },
      async kill(signal = "SIGTERM", timeoutMs = 15_000) {
        if (exitedYet) return;
        signalGroup(pid, signal);
        const timer = setTimeout(() => signalGroup(pid, "SIGKILL"), timeoutMs);
        await exited;
        clearTimeout(timer);
      },
    };
    this.#children.add(handle);
    // Children live in their own process groups, so they would outlive a test process that dies before
    // afterAll (a crash, a hard timeout); take them down with it.
    const onExit = () => signalGroup(pid, "SIGKILL");
    process.once("exit", onExit);
    void exited.then(() => {
      this.#children.delete(handle);
      process.off("exit", onExit);
    });
    return handle;
  }

  /** Children still running. */
  running(): LoopsSyncProcess[] {
    return [...this.#children];
  }

  /** SIGKILLs every child still running (their whole groups) and closes the log files. */
  async killAll(): Promise<void> {
    await Promise.all([...this.#children].map((c) => c.kill("SIGKILL", 5_000)));
    await Promise.all(this.#streams.map((s) => new Promise<void>((resolve) => s.end(() => resolve()))));
  }
}

function signalGroup(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pid, signal);
  } catch {
    // Already gone.
  }
}

/** The URL a receiver child logged ("receiver listening" with { url }). */
export async function receiverUrlOf(child: LoopsSyncProcess, timeoutMs = 30_000): Promise<string> {
  return await listeningUrl(child, "receiver listening", timeoutMs);
}

/** The admin listener's URL a child logged ("admin listening" with { url }). */
export async function adminUrlOf(child: LoopsSyncProcess, timeoutMs = 30_000): Promise<string> {
  return await listeningUrl(child, "admin listening", timeoutMs);
}

async function listeningUrl(child: LoopsSyncProcess, msg: string, timeoutMs: number): Promise<string> {
  const line = await child.waitForLine(new RegExp(`"msg":"${msg}"`), timeoutMs);
  // Logs go to stderr, whose lines are kept with a "[stderr] " prefix.
  const { url } = JSON.parse(line.replace(/^\[stderr\] /, "")) as { url?: string };
  if (!url) throw new Error(`${child.name}: "${msg}" line without a url: ${line}`);
  return url;
}

/** Where a Loops API answers (the sandbox or a stand-in) and the credentials it accepts. */
export interface LoopsApi {
  apiUrl: string;
  authUrl: string;
  credentials: { clientId: string; clientSecret: string; applicationId: string };
}

/** The variables that point a `loops-sync` child at a Loops API: a sandbox object fits as it is. */
export function loopsApiEnv({ apiUrl, authUrl, credentials }: LoopsApi): Record<string, string> {
  return {
    LOOPS_API_URL: apiUrl,
    LOOPS_AUTH_URL: authUrl,
    LOOPS_CLIENT_ID: credentials.clientId,
    LOOPS_CLIENT_SECRET: credentials.clientSecret,
    LOOPS_APPLICATION_ID: credentials.applicationId,
    // The product's default budget (25/s) would pace tests and benches about something else; those about
    // the budget set LOOPS_MAX_RPS themselves.
    LOOPS_MAX_RPS: "1000",
  };
}

export interface LoopsSyncEnvOptions {
  databaseUrl: string;
  /** The sandbox (or a stand-in) the worker calls. */
  api: { apiUrl: string; authUrl: string };
  credentials: { clientId: string; clientSecret: string; applicationId: string };
  webhookSecrets: readonly string[];
  /** Receiver port. Default: 0. */
  port?: number;
  /** Default: "info". */
  logLevel?: string;
  /** More variables (WORKER_CONCURRENCY, LOOPS_MERCHANT_IDS, …). Default: none. */
  extra?: Record<string, string>;
}

/** The environment of a `loops-sync` child pointed at a sandbox and a database (migrations done by the test). */
export function loopsSyncEnv({
  databaseUrl,
  api,
  credentials,
  webhookSecrets,
  port = 0,
  logLevel = "info",
  extra = {},
}: LoopsSyncEnvOptions): Record<string, string> {
  return {
    DATABASE_URL: databaseUrl,
    ...loopsApiEnv({ ...api, credentials }),
    LOOPS_WEBHOOK_SECRETS: webhookSecrets.join(","),
    PORT: String(port),
    HOST: "127.0.0.1",
    LOG_LEVEL: logLevel,
    LOOPS_SYNC_MIGRATE_ON_START: "false",
    // Any free port: several processes share this machine (the default 9091 would collide).
    ADMIN_PORT: "0",
    STATUS_PAGE: "false",
    ...extra,
  };
}

/**
 * Writes the secrets a suite handed its processes beside their logs (`*.secrets.json`), so the secrets
 * suite can look for exactly those values in every log line. Test-only values, under the ignored .reports/.
 */
export function recordSecrets(name: string, secrets: readonly string[]): void {
  mkdirSync(LOG_DIR, { recursive: true });
  writeFileSync(path.join(LOG_DIR, `${name}.secrets.json`), JSON.stringify([...new Set(secrets)]));
}
