import { execFileSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const root = fileURLToPath(new URL("../../", import.meta.url));

/** Lower-case words joined by hyphens, then the extension(s): `claim-orders.ts`, `order-input.test.ts`. */
const KEBAB = /^[a-z0-9]+(?:-[a-z0-9]+)*(?:\.[a-z0-9]+)+$/;

describe("file names", () => {
  it("are kebab-case for every source file in the tree", () => {
    const tracked = execFileSync("git", ["ls-files", "-z", "--", "*.ts", "*.tsx", "*.mts", "*.js", "*.mjs"], {
      cwd: root,
      encoding: "utf8",
    })
      .split("\0")
      .filter(Boolean);
    expect(tracked.length).toBeGreaterThan(100);
    const offenders = tracked.filter((file) => !KEBAB.test(file.slice(file.lastIndexOf("/") + 1)));
    expect(offenders).toEqual([]);
  });
});
