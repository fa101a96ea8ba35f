// A primary and a streaming hot standby of its own (initdb, pg_basebackup -R, a second port), for the tests
// and the bench that prove what readers on a standby get. It never touches the machine's own cluster: both
// servers live in a temporary directory, listen on 127.0.0.1 at free ports and have no Unix socket.

import { type ChildProcess, execFile, spawn } from "node:child_process";
import { chownSync, existsSync, mkdtempSync, rmSync } from "node:fs";
import { userInfo } from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { freePort } from "./free-port.ts";

const run = promisify(execFile);

/** Where the machine's PostgreSQL binaries are: PG_BIN, else the newest of /usr/lib/postgresql/<n>/bin. */
export function postgresBinaries(): string {
  if (process.env.PG_BIN) return process.env.PG_BIN;
  for (const major of [17, 16, 15, 14]) {
    const dir = `/usr/lib/postgresql/${major}/bin`;
    if (existsSync(path.join(dir, "pg_basebackup"))) return dir;
  }
  throw new Error("no PostgreSQL binaries found: set PG_BIN to a folder holding initdb and pg_basebackup");
}

/** initdb refuses root: as root the servers run as the `postgres` OS user, which owns the directory. */
async function serverUser(): Promise<{ uid: number; gid: number } | undefined> {
  if (userInfo().uid !== 0) return undefined;
  const { stdout } = await run("id", ["-u", "postgres"]);
  const { stdout: gid } = await run("id", ["-g", "postgres"]);
  return { uid: Number(stdout.trim()), gid: Number(gid.trim()) };
}

/** Small and quick: a test cluster, never a durable one. */
const SETTINGS = [
  "listen_addresses=127.0.0.1",
  "unix_socket_directories=",
  "shared_buffers=16MB",
  "fsync=off",
  "full_page_writes=off",
  "max_connections=60",
  "max_wal_senders=4",
  // Standby reads may run beside vacuum on the primary without being cancelled for a conflict.
  "hot_standby_feedback=on",
  "log_min_messages=warning",
];

export interface ServerHandle {
  port: number;
  /** A URL of `database` on this server, as the superuser `postgres`. */
  url(database?: string): string;
  stop(): Promise<void>;
}

export interface StandbyCluster {
  primary: ServerHandle;
  standby: ServerHandle;
  /** Stops both servers and removes their directory; safe to call twice. */
  stop(): Promise<void>;
}

function startServer(
  bin: string,
  pgdata: string,
  port: number,
  user: { uid: number; gid: number } | undefined,
) {
  const args = ["-D", pgdata, "-p", String(port), ...SETTINGS.flatMap((s) => ["-c", s])];
  const child: ChildProcess = spawn(path.join(bin, "postgres"), args, {
    ...(user ? { uid: user.uid, gid: user.gid } : {}),
    cwd: pgdata,
    stdio: ["ignore", "ignore", "pipe"],
    env: { PATH: process.env.PATH ?? "", LC_ALL: "C", LANG: "C" },
  });
  let output = "";
  const exited = new Promise<void>((resolve) => child.once("close", () => resolve()));
  const ready = new Promise<void>((resolve, reject) => {
    const onData = (chunk: Buffer) => {
      if (output.length < 64 * 1024) output += chunk.toString("utf8");
      // "accept connections" on a primary, "accept read-only connections" on a hot standby.
      if (/ready to accept (read-only )?connections/.test(output)) {
        child.stderr?.off("data", onData);
        child.stderr?.resume();
        resolve();
      }
    };
    child.stderr?.on("data", onData);
    child.once("error", reject);
    child.once("close", (code) =>
      reject(new Error(`postgres on port ${port} exited (${code}): ${output.slice(-2000)}`)),
    );
  });
  const kill = () => void child.kill("SIGINT");
  process.on("exit", kill);
  const handle: ServerHandle = {
    port,
    url: (database = "postgres") => `postgres://postgres@127.0.0.1:${port}/${database}`,
    async stop() {
      process.off("exit", kill);
      // SIGINT: fast shutdown, the test's data need not be flushed.
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGINT");
      await exited;
    },
  };
  return { ready, handle };
}

/**
 * Starts a primary (with `database` created on it, then `prepare(url)` run, e.g. migrations) and a hot standby
 * streaming from it. Everything is removed again when it fails half way.
 */
export async function startStandbyCluster({
  database = "loops",
  prepare,
}: {
  database?: string;
  prepare?: (primaryUrl: string) => Promise<void>;
} = {}): Promise<StandbyCluster> {
  const bin = postgresBinaries();
  const user = await serverUser();
  const dir = mkdtempSync("/tmp/loops-sync-standby-");
  if (user) chownSync(dir, user.uid, user.gid);
  const stops: (() => Promise<void>)[] = [];
  let stopped = false;
  const stop = async () => {
    if (stopped) return;
    stopped = true;
    for (const s of stops.reverse()) await s().catch(() => {});
    rmSync(dir, { recursive: true, force: true });
  };
  const as = user ? { uid: user.uid, gid: user.gid } : {};
  const env = { PATH: process.env.PATH ?? "", LC_ALL: "C", LANG: "C" };
  try {
    const primaryData = path.join(dir, "primary");
    const standbyData = path.join(dir, "standby");
    await run(
      path.join(bin, "initdb"),
      ["-D", primaryData, "-U", "postgres", "--auth=trust", "-E", "UTF8", "--no-sync", "--no-instructions"],
      { ...as, env, cwd: dir },
    );
    const primaryPort = await freePort();
    const primary = startServer(bin, primaryData, primaryPort, user);
    stops.push(primary.handle.stop);
    await primary.ready;
    const { default: postgres } = await import("postgres");
    const admin = postgres(primary.handle.url(), { max: 1, onnotice: () => {} });
    try {
      await admin.unsafe(`create database ${database}`);
    } finally {
      await admin.end();
    }
    await prepare?.(primary.handle.url(database));
    // initdb's pg_hba.conf trusts replication connections from 127.0.0.1; -R writes primary_conninfo and
    // standby.signal, -X stream carries the WAL written during the copy.
    await run(
      path.join(bin, "pg_basebackup"),
      [
        "-h",
        "127.0.0.1",
        "-p",
        String(primaryPort),
        "-U",
        "postgres",
        "-D",
        standbyData,
        "-R",
        "-X",
        "stream",
        "--no-sync",
        "-c",
        "fast",
      ],
      { ...as, env, cwd: dir },
    );
    const standby = startServer(bin, standbyData, await freePort(), user);
    stops.push(standby.handle.stop);
    await standby.ready;
    return { primary: primary.handle, standby: standby.handle, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}
