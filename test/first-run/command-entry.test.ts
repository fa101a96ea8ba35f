// Where users look for the command: `pnpm exec loops-sync` in the checkout, --version/-V, and the exit-code
// table at the end of every subcommand's --help.
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";

const repository = path.resolve(import.meta.dirname, "../..");
const bin = path.join(repository, "bin/loops-sync");
const { version } = JSON.parse(readFileSync(path.join(repository, "package.json"), "utf8")) as {
  version: string;
};
const subcommands = [
  "migrate",
  "receiver",
  "worker",
  "start",
  "catchup",
  "backfill",
  "status",
  "replay",
  "redeliver",
  "verify",
  "sandbox",
  "demo",
  "forward",
];

function run(command: string, args: string[]) {
  return spawnSync(command, args, {
    cwd: repository,
    encoding: "utf8",
    env: { PATH: process.env.PATH, HOME: process.env.HOME },
  });
}

describe("the loops-sync command", { timeout: 60_000 }, () => {
  it("is on pnpm's PATH in the checkout, and prints the version for --version and -V", () => {
    // One pnpm start (seconds of npx) for both flags: each `loops-sync` is found on the PATH pnpm exec sets.
    const r = run("npx", ["-y", "pnpm@10", "exec", "sh", "-c", "loops-sync --version && loops-sync -V"]);
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout.trim().split("\n")).toEqual([version, version]);
  });

  let table: string | undefined;
  it.each(subcommands)("%s --help ends with the exit-code table the top level shows", (name) => {
    if (table === undefined) {
      const top = run(bin, ["--help"]).stdout;
      table = top.slice(top.indexOf("Exit codes:"));
    }
    expect(table).toMatch(/^Exit codes:[\s\S]*130 +interrupted/);
    const r = run(bin, [name, "--help"]);
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout.endsWith(table)).toBe(true);
  });
});
