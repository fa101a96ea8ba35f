import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import path from "node:path";
import { isDbError } from "../db-error.ts";
import { classifyStartOutput, classifySystemError } from "./embedded-error.ts";
import type { ServerUser } from "./embedded-place.ts";

/** English messages, so the output can be read; a UTF-8 locale when the machine has one. */
function locale(): string {
  try {
    const available = execFileSync("locale", ["-a"], { encoding: "utf8" }).split("\n");
    return ["C.UTF-8", "C.utf8", "en_US.UTF-8", "en_US.utf8"].find((name) => available.includes(name)) ?? "C";
  } catch {
    return "C";
  }
}

function spawnAs(binary: string, args: string[], user: ServerUser | undefined, cwd: string): ChildProcess {
  const lang = locale();
  return spawn(binary, args, {
    ...(user ? { uid: user.uid, gid: user.gid } : {}),
    cwd,
    stdio: ["ignore", "pipe", "pipe"],
    env: { ...process.env, LC_ALL: lang, LC_MESSAGES: lang, LANG: lang },
  });
}

export interface InitdbOptions {
  native: string;
  pgdata: string;
  passwordFile: string;
  user: ServerUser | undefined;
  /** The folder named in error lines. */
  shownDir: string;
}

/** Runs initdb; its failure becomes one classified line. */
export async function runInitdb({
  native,
  pgdata,
  passwordFile,
  user,
  shownDir,
}: InitdbOptions): Promise<void> {
  const binary = path.join(native, "bin", "initdb");
  const child = spawnAs(
    binary,
    [
      `--pgdata=${pgdata}`,
      "--auth=password",
      "--username=postgres",
      `--pwfile=${passwordFile}`,
      "--encoding=UTF8",
    ],
    user,
    path.dirname(pgdata),
  );
  let output = "";
  const collect = (chunk: Buffer) => {
    output += chunk.toString("utf8");
  };
  child.stdout?.on("data", collect);
  child.stderr?.on("data", collect);
  await new Promise<void>((resolve, reject) => {
    child.on("error", (error) => reject(classifySystemError(error, binary)));
    child.on("close", (code) => {
      if (code === 0) resolve();
      else reject(classifyStartOutput(output, { dataDir: shownDir, port: 0 }));
    });
  });
}

export interface RunningPostgres {
  stop(): Promise<void>;
}

export interface SpawnPostgresOptions {
  native: string;
  pgdata: string;
  port: number;
  user: ServerUser | undefined;
}

/**
 * Starts the server on 127.0.0.1 only (no Unix socket, so another cluster's socket on the same port
 * cannot clash) and resolves once it accepts connections. It is stopped when this process exits.
 */
export async function spawnPostgres({
  native,
  pgdata,
  port,
  user,
}: SpawnPostgresOptions): Promise<RunningPostgres> {
  const binary = path.join(native, "bin", "postgres");
  const args = [
    "-D",
    pgdata,
    "-p",
    String(port),
    "-c",
    "listen_addresses=127.0.0.1",
    "-c",
    "unix_socket_directories=",
  ];
  const child = spawnAs(binary, args, user, pgdata);
  let output = "";
  // The pipe is drained for the server's whole life: a full pipe would block its logging.
  child.stdout?.resume();
  const ready = new Promise<void>((resolve, reject) => {
    const onOutput = (chunk: Buffer) => {
      if (output.length < 64 * 1024) output += chunk.toString("utf8");
      if (output.includes("database system is ready to accept connections")) {
        output = "";
        child.stderr?.off("data", onOutput);
        child.stderr?.resume();
        resolve();
      }
    };
    child.stderr?.on("data", onOutput);
    child.on("error", (error) => reject(classifySystemError(error, binary)));
    child.on("close", () => reject(classifyStartOutput(output, { dataDir: pgdata, port })));
  });
  const exited = new Promise<void>((resolve) => child.on("close", () => resolve()));
  const killOnExit = () => void child.kill("SIGINT");
  process.on("exit", killOnExit);
  try {
    await ready;
  } catch (error) {
    process.off("exit", killOnExit);
    throw isDbError(error, "embedded") ? error : classifySystemError(error, pgdata);
  }
  return {
    stop: async () => {
      process.off("exit", killOnExit);
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGINT");
      await exited;
    },
  };
}
