// The embedded PostgreSQL, for real: where it can start (0700 folders, spaces, an ordinary user) and how each
// failure to start reads (one line, exit 3 from the command).
import { execFileSync, spawn } from "node:child_process";
import { accessSync, constants, existsSync } from "node:fs";
import { chmod, chown, mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { createServer, type Server } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { DbError, nativeDir, relocatedBaseFor, startEmbeddedPostgres } from "@loops-sync/db";
import postgres from "postgres";
import { afterAll, describe, expect, it } from "vitest";
import { runCli } from "../support/operator-run.ts";

const isRoot = process.getuid?.() === 0;
const repository = path.resolve(import.meta.dirname, "../..");
const folders: string[] = [];

/** A fresh 0700 folder (as `mktemp -d` makes) with a space in the path below it. */
async function folder(): Promise<string> {
  const dir = await mkdtemp(path.join(tmpdir(), "loops-sync-embedded-"));
  folders.push(dir);
  const spaced = path.join(dir, "my projects");
  await mkdir(spaced);
  // Where root's runs move the cluster of `<spaced>/.data`; it goes with the folder.
  folders.push(relocatedBaseFor(path.join(spaced, ".data")));
  return spaced;
}

async function dataDirectory(url: string): Promise<string> {
  const sql = postgres(url, { max: 1 });
  try {
    const [row] = await sql<{ dir: string }[]>`select current_setting('data_directory') as dir`;
    return row!.dir;
  } finally {
    await sql.end();
  }
}

async function failure(start: Promise<unknown>): Promise<DbError<"embedded">> {
  const error = await start.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(DbError);
  expect((error as DbError).kind).toBe("embedded");
  const e = error as DbError<"embedded">;
  expect(e.message).not.toContain("\n");
  return e;
}

function gone(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return false;
  } catch {
    return true;
  }
}

afterAll(async () => {
  for (const dir of folders) await rm(dir, { recursive: true, force: true });
});

describe("embedded PostgreSQL starts wherever the checkout is", { timeout: 120_000 }, () => {
  it("starts under a 0700 folder with a space in its path, and keeps its data between runs", async () => {
    const dataDir = path.join(await folder(), ".data");
    const first = await startEmbeddedPostgres({ dataDir });
    try {
      const sql = postgres(first.url, { max: 1 });
      await sql`create table kept (id int)`;
      await sql.end();
      if (isRoot) {
        expect(first.relocation).toMatch(/keeps its .*data in \/var\/lib\/loops-sync\/[0-9a-f]+\/pg/);
        const origin = path.join(relocatedBaseFor(dataDir), "origin");
        expect(await readFile(origin, "utf8")).toBe(`${path.resolve(dataDir)}\n`);
      }
      await dataDirectory(first.url);
    } finally {
      await first.stop();
    }
    const second = await startEmbeddedPostgres({ dataDir });
    try {
      expect(second.relocation).toBe(first.relocation);
      const sql = postgres(second.url, { max: 1 });
      expect(await sql`select count(*)::int as n from kept`).toEqual([{ n: 0 }]);
      await sql.end();
    } finally {
      await second.stop();
    }
  });

  it("recovers by itself from a postmaster.pid left by kill -9, and from one whose pid was reused", async () => {
    const dataDir = path.join(await folder(), ".data");
    const first = await startEmbeddedPostgres({ dataDir });
    const pgdata = await dataDirectory(first.url);
    const pid = Number((await readFile(path.join(pgdata, "postmaster.pid"), "utf8")).split("\n")[0]);
    process.kill(pid, "SIGKILL");
    await first.stop();
    // Its backends leave once they see the postmaster gone.
    for (let i = 0; i < 100 && !gone(pid); i++) await new Promise((r) => setTimeout(r, 100));
    const lock = await readFile(path.join(pgdata, "postmaster.pid"), "utf8");
    const second = await startEmbeddedPostgres({ dataDir });
    await second.stop();
    // The pid of a live process that is not a postgres: as after a reboot, where pids are handed out anew.
    const sleeper = spawn("sleep", ["60"]);
    try {
      await writeFile(path.join(pgdata, "postmaster.pid"), lock.replace(/^\d+/, String(sleeper.pid)));
      const third = await startEmbeddedPostgres({ dataDir });
      await third.destroy();
      // A throwaway cluster leaves nothing behind, wherever it lived.
      expect(existsSync(pgdata)).toBe(false);
    } finally {
      sleeper.kill();
    }
  });
});

describe("every failure to start is one line naming cause and fix", { timeout: 120_000 }, () => {
  it("a taken port", async () => {
    const taken: Server = createServer();
    await new Promise<void>((resolve) => taken.listen(0, "127.0.0.1", resolve));
    const port = (taken.address() as { port: number }).port;
    try {
      const error = await failure(
        startEmbeddedPostgres({ dataDir: path.join(await folder(), ".data"), port }),
      );
      expect(error.code).toBe("port-taken");
      expect(error.message).toContain(`port ${port}`);
    } finally {
      taken.close();
    }
  });

  it("a server still running on the folder: one line and exit 3 from migrate, status and demo", async () => {
    const dataDir = path.join(await folder(), ".data");
    const running = await startEmbeddedPostgres({ dataDir });
    try {
      const pgdata = await dataDirectory(running.url);
      const pid = (await readFile(path.join(pgdata, "postmaster.pid"), "utf8")).split("\n")[0];
      const error = await failure(startEmbeddedPostgres({ dataDir }));
      expect(error.code).toBe("already-running");
      expect(error.message).toContain(`kill ${pid}`);
      for (const args of [["migrate"], ["status"], ["demo", "--duration", "1"]]) {
        const run = await runCli(args, { LOOPS_SYNC_DATA_DIR: dataDir }, 60_000);
        expect(run.code, `${args[0]}: ${run.stderr}`).toBe(3);
        expect(run.stderr.trim().split("\n"), args[0]).toEqual([
          `loops-sync: embedded PostgreSQL: another server (pid ${pid}) is running on ${pgdata}; stop it (kill ${pid}) and retry, or set DATABASE_URL to a PostgreSQL server`,
        ]);
      }
    } finally {
      await running.stop();
    }
  });

  it.skipIf(!canMount())("a full disk (a 16 MB tmpfs)", async () => {
    const mountPoint = await folder();
    // The server's user must reach the mount, else the cluster would move off it.
    await chmod(path.dirname(mountPoint), 0o755);
    execFileSync("mount", ["-t", "tmpfs", "-o", "size=16m", "tmpfs", mountPoint]);
    try {
      const error = await failure(startEmbeddedPostgres({ dataDir: path.join(mountPoint, ".data") }));
      expect(error.code).toBe("disk-full");
      expect(error.message).toBe(
        `embedded PostgreSQL: the disk holding ${path.join(mountPoint, ".data", "pg")} is full; free some space, set LOOPS_SYNC_DATA_DIR to a folder on another disk, or set DATABASE_URL to a PostgreSQL server`,
      );
    } finally {
      execFileSync("umount", [mountPoint]);
    }
  });

  it.skipIf(!ordinaryUserCanRun())(
    "no permission on the data folder, as an ordinary user: exit 3",
    async () => {
      const locked = await folder();
      await chmod(path.dirname(locked), 0o755);
      const run = await runAsNobody(["migrate"], path.join(locked, ".data"));
      expect(run.code, run.stderr).toBe(3);
      expect(run.stderr.trim().split("\n")).toEqual([
        `loops-sync: embedded PostgreSQL: no permission to use ${path.join(locked, ".data")} (EACCES); set LOOPS_SYNC_DATA_DIR to a folder you can write, or set DATABASE_URL to a PostgreSQL server`,
      ]);
    },
  );

  it("an unsupported platform", async () => {
    const error = await failure(Promise.resolve().then(() => nativeDir("aix", "ppc64")));
    expect(error.code).toBe("unsupported-platform");
    expect(error.message).toContain("no build for aix-ppc64");
  });
});

describe("as an ordinary user", { timeout: 120_000 }, () => {
  it.skipIf(!ordinaryUserCanRun())(
    "migrate starts embedded PostgreSQL in a folder that user owns",
    async () => {
      const home = await folder();
      await chmod(path.dirname(home), 0o755);
      await chown(home, 65534, 65534);
      const run = await runAsNobody(["migrate"], path.join(home, ".data"));
      expect(run.code, run.stderr).toBe(0);
    },
  );
});

function canMount(): boolean {
  if (!isRoot) return false;
  try {
    execFileSync("sh", [
      "-c",
      'd=$(mktemp -d) && mount -t tmpfs -o size=1m tmpfs "$d" && umount "$d" && rmdir "$d"',
    ]);
    return true;
  } catch {
    return false;
  }
}

/** Root can switch to `nobody` when that user can reach this checkout's Node and sources. */
function ordinaryUserCanRun(): boolean {
  if (!isRoot) return false;
  try {
    execFileSync("runuser", [
      "-u",
      "nobody",
      "--",
      "test",
      "-r",
      path.join(repository, "apps/cli/src/main.ts"),
    ]);
    accessSync(path.join(repository, "node_modules/node/bin/node"), constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

function runAsNobody(
  args: string[],
  dataDir: string,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn("runuser", ["-u", "nobody", "--", path.join(repository, "bin/loops-sync"), ...args], {
      cwd: "/",
      env: { PATH: process.env.PATH ?? "", HOME: "/tmp", LOG_LEVEL: "silent", LOOPS_SYNC_DATA_DIR: dataDir },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk: Buffer) => {
      stdout += chunk.toString("utf8");
    });
    child.stderr.on("data", (chunk: Buffer) => {
      stderr += chunk.toString("utf8");
    });
    child.once("error", reject);
    child.once("close", (code) => resolve({ code, stdout, stderr }));
  });
}
