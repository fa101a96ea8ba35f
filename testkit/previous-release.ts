// The previous release, checked out from this clone's own history with its own install, so an upgrade test
// runs the processes an operator has deployed today, not this tree's code under an older schema.

import { execFile } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { REPO_ROOT } from "./processes.ts";

const run = promisify(execFile);

/** The release before this one: its version and commit (docs/upgrading.md). */
export const PREVIOUS_RELEASE = {
  version: "0.1.0",
  commit: "ebb67db1c7cc3f46265aa2590fb8bd93ee6a7353",
} as const;

export interface ReleaseCheckout {
  /** The worktree's root: its `bin/loops-sync` runs that release. */
  root: string;
  commit: string;
  /** Seconds the checkout and its install took. */
  seconds: number;
  /** Removes the worktree and its registration in this clone. */
  remove(): Promise<void>;
}

async function git(args: string[], cwd = REPO_ROOT): Promise<string> {
  const { stdout } = await run("git", args, { cwd, maxBuffer: 16 * 1024 * 1024 });
  return stdout.trim();
}

/**
 * `git worktree add --detach` of `commit` in a temporary folder, then its own `pnpm install` from the shared
 * store (offline first; a package missing from the store is fetched). Not cached across runs: a worktree is
 * registered in the clone's .git, and a half-installed one left by a killed run would be reused as if whole.
 */
export async function checkoutRelease(commit: string = PREVIOUS_RELEASE.commit): Promise<ReleaseCheckout> {
  const started = performance.now();
  try {
    await git(["cat-file", "-e", `${commit}^{commit}`]);
  } catch {
    throw new Error(
      `commit ${commit} (the previous release) is not in this clone: a shallow clone lacks history; run \`git fetch --unshallow\` (or clone with full depth)`,
    );
  }
  const parent = await mkdtemp(path.join(tmpdir(), "loops-sync-release-"));
  const root = path.join(parent, "tree");
  const remove = async () => {
    await git(["worktree", "remove", "--force", root]).catch(() => {});
    await rm(parent, { recursive: true, force: true });
    await git(["worktree", "prune"]).catch(() => {});
  };
  try {
    await git(["worktree", "add", "--detach", root, commit]);
    await install(root);
  } catch (error) {
    await remove();
    throw error;
  }
  return { root, commit, seconds: (performance.now() - started) / 1000, remove };
}

async function install(root: string): Promise<void> {
  const attempt = (mode: string) =>
    run("npx", ["-y", "pnpm@10", "install", "--frozen-lockfile", mode], {
      cwd: root,
      env: { ...process.env, CI: "true" },
      maxBuffer: 64 * 1024 * 1024,
    });
  try {
    await attempt("--offline");
  } catch {
    try {
      await attempt("--prefer-offline");
    } catch (error) {
      const { stderr = "", stdout = "" } = error as { stderr?: string; stdout?: string };
      throw new Error(
        `install of the previous release in ${root} failed:\n${(stdout + stderr).slice(-2000)}`,
        {
          cause: error,
        },
      );
    }
  }
}
