// Run by `pnpm install` (the root package's `prepare`): points git at .githooks/ so the commit-msg hook holds
// subjects to 72 characters. Outside a git checkout (a tarball, an image build) it does nothing.
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";

const inside = spawnSync("git", ["rev-parse", "--is-inside-work-tree"], { encoding: "utf8" });
if (inside.status === 0 && inside.stdout.trim() === "true" && existsSync(".githooks/commit-msg")) {
  const set = spawnSync("git", ["config", "core.hooksPath", ".githooks"], { stdio: "inherit" });
  if (set.status !== 0)
    console.warn("install-git-hooks: could not set core.hooksPath; commit subjects are not checked");
}
