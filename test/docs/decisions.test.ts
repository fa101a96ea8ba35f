import { execFileSync } from "node:child_process";
import { existsSync, readFileSync, statSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const root = fileURLToPath(new URL("../../", import.meta.url));
const DECISIONS = path.join(root, "docs", "decisions.md");
/** This file, whose patterns name no section. */
const SELF = path
  .relative(root, fileURLToPath(import.meta.url))
  .split(path.sep)
  .join("/");

/** Short records of current decisions; history lives in git and CHANGELOG.md. */
const LIMIT_BYTES = 25_000;

/** `docs/decisions.md, "Title"` (or `decisions.md "Title"`), the title possibly wrapped over comment lines. */
const REFERENCE = /decisions\.md,?\s+\(?"([^"]+)"/g;

/** Joins a title wrapped over lines of a `//`, ` * `, `--` or `#` comment into one line. */
const unwrap = (text: string): string => text.replace(/\s*\n\s*(?:\/\/|\*|--|#)?\s*/g, " ");

describe("docs/decisions.md", () => {
  it("is under 25,000 bytes", () => {
    expect(statSync(DECISIONS).size).toBeLessThan(LIMIT_BYTES);
  });

  it("has a heading for every section the tree quotes it by", () => {
    const headings = readFileSync(DECISIONS, "utf8")
      .split("\n")
      .filter((line) => /^#{2,3} /.test(line))
      .map((line) => line.replace(/^#+ /, ""));
    const files = execFileSync("git", ["ls-files", "-z"], { cwd: root, encoding: "utf8" })
      .split("\0")
      .filter((f) => f && !["CHANGELOG.md", "docs/decisions.md", SELF].includes(f));
    const missing: string[] = [];
    let quoted = 0;
    for (const file of files) {
      const full = path.join(root, file);
      if (!existsSync(full) || statSync(full).size > 1_000_000) continue;
      const text = readFileSync(full, "utf8");
      if (!text.includes("decisions.md")) continue;
      for (const [, title] of unwrap(text).matchAll(REFERENCE)) {
        quoted++;
        if (!headings.some((h) => h.startsWith(title!))) missing.push(`${file}: "${title}"`);
      }
    }
    expect(quoted).toBeGreaterThan(5);
    expect(missing).toEqual([]);
  });
});
