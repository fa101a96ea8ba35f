// The commit-msg hook that `pnpm install` installs holds commit subjects to 72 characters, in a real git repository.
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { REPO_ROOT } from "#testkit/processes";

let repo: string;
const git = (...args: string[]) =>
  spawnSync("git", ["-c", "user.name=t", "-c", "user.email=t@example.com", ...args], {
    cwd: repo,
    encoding: "utf8",
  });

beforeAll(() => {
  repo = mkdtempSync(path.join(tmpdir(), "loops-sync-hook-"));
  expect(git("init", "-q").status).toBe(0);
  // The hook and the installer as the checkout has them.
  spawnSync("cp", ["-r", path.join(REPO_ROOT, ".githooks"), repo]);
  const install = spawnSync(process.execPath, [path.join(REPO_ROOT, "scripts/install-git-hooks.ts")], {
    cwd: repo,
    encoding: "utf8",
  });
  expect(install.status).toBe(0);
});
afterAll(() => rmSync(repo, { recursive: true, force: true }));

describe("the commit-msg hook", () => {
  it("is installed as core.hooksPath", () => {
    expect(git("config", "core.hooksPath").stdout.trim()).toBe(".githooks");
  });

  it("takes a subject of 72 characters and refuses one of 73, naming the limit", () => {
    writeFileSync(path.join(repo, "a.txt"), "a");
    git("add", "a.txt");
    expect(git("commit", "-q", "-m", `area: ${"x".repeat(66)}`).status).toBe(0);
    writeFileSync(path.join(repo, "a.txt"), "b");
    git("add", "a.txt");
    const refused = git("commit", "-q", "-m", `area: ${"x".repeat(67)}\n\nThe body may be long.`);
    expect(refused.status).not.toBe(0);
    expect(refused.stderr).toContain("73 characters; keep it to 72 or fewer");
  });
});
