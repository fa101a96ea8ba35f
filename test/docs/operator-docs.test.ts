import { execFileSync } from "node:child_process";
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const root = fileURLToPath(new URL("../../", import.meta.url));

/** The operator's guide, split by reader: each file stays short enough to read through. */
const GUIDE = [
  "operations.md",
  "deploy.md",
  "scaling.md",
  "runbook.md",
  "cli.md",
  "life-of-an-order.md",
  "monitoring.md",
  "reporting.md",
  "queries.md",
  "feed.md",
  "testing.md",
];
/** One reader per file, each short enough to read through; the README, the changelog and the decisions too. */
const LIMIT_BYTES = 25_000;

describe("the operator's guide", () => {
  const everyDoc = [
    "README.md",
    // Read by whoever upgrades: what changed, condensed, not the history of every step (that is in git).
    "CHANGELOG.md",
    ...readdirSync(path.join(root, "docs"))
      .filter((n) => n.endsWith(".md"))
      .map((n) => `docs/${n}`),
  ];
  it.each(everyDoc)("%s is under 25,000 bytes", (name) => {
    expect(statSync(path.join(root, name)).size).toBeLessThan(LIMIT_BYTES);
  });

  it("every docs/*.md named in the tree exists (CHANGELOG is history and may name old ones)", () => {
    const files = execFileSync("git", ["ls-files", "-z"], { cwd: root, encoding: "utf8" })
      .split("\0")
      .filter((f) => f && f !== "CHANGELOG.md" && /\.(ts|md|ya?ml|json|sh)$|Dockerfile$/.test(f));
    const missing: string[] = [];
    for (const file of files) {
      if (!existsSync(path.join(root, file))) continue;
      for (const [, name] of readFileSync(path.join(root, file), "utf8").matchAll(/docs\/([a-z0-9-]+\.md)/g))
        if (!existsSync(path.join(root, "docs", name!))) missing.push(`${file} → docs/${name}`);
    }
    expect(files.length).toBeGreaterThan(100);
    expect(missing).toEqual([]);
  });

  it("every relative link between the docs resolves", () => {
    const broken: string[] = [];
    for (const name of GUIDE) {
      const text = readFileSync(path.join(root, "docs", name), "utf8");
      for (const [, target] of text.matchAll(/\]\(([a-z0-9-]+\.md)\)/g))
        if (!existsSync(path.join(root, "docs", target!))) broken.push(`docs/${name} → ${target}`);
    }
    expect(broken).toEqual([]);
  });
});
