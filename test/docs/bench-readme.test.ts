// bench/README.md is a reference, not a diary (issue 54): how to run each bench, what it measures, what it
// shows now. Dated history goes to bench/results/*.json (and the CHANGELOG), where nobody has to read past it.
import { readdirSync, readFileSync, statSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const root = fileURLToPath(new URL("../../", import.meta.url));
const README = path.join(root, "bench", "README.md");
const LIMIT_BYTES = 15_000;

describe("bench/README.md", () => {
  const text = readFileSync(README, "utf8");

  it("is at most 15,000 bytes", () => {
    expect(statSync(README).size).toBeLessThanOrEqual(LIMIT_BYTES);
  });

  it("names every bench the root package.json runs", () => {
    const scripts = JSON.parse(readFileSync(path.join(root, "package.json"), "utf8")).scripts as Record<
      string,
      string
    >;
    const benches = Object.entries(scripts)
      .filter(([name]) => name === "bench" || name.startsWith("bench:"))
      .map(([, command]) => /bench\/[\w-]+\.ts/.exec(command)?.[0])
      .filter((file): file is string => file !== undefined);
    expect(benches.length).toBeGreaterThan(5);
    expect(benches.filter((file) => !text.includes(`\`${file}\``))).toEqual([]);
  });

  it("dates every current figure and keeps one line per section of this round's benches", () => {
    const now = [...text.matchAll(/\*\*Now\*\*([^\n]*)/g)].map((m) => m[1]!);
    expect(now.length).toBeGreaterThan(8);
    expect(
      now.filter((line) => !/\(\d{4}-\d{2}-\d{2}/.test(line) && !line.includes("no recorded run")),
    ).toEqual([]);
    for (const section of ["Restart and onboarding", "Online upgrade", "Gateway", "Readers on a standby"]) {
      expect(text, section).toMatch(new RegExp(`#+ ${section}[^\\n]*\\n\\nfigures: see \`bench/results/`));
    }
  });

  it("points at result files that exist and parse", () => {
    const named = [...text.matchAll(/bench\/results\/([\w.-]+\.json)/g)].map((m) => m[1]!);
    const files = readdirSync(path.join(root, "bench", "results"));
    expect(named.length).toBeGreaterThan(3);
    for (const name of new Set(named)) {
      expect(files, name).toContain(name);
      expect(
        () => JSON.parse(readFileSync(path.join(root, "bench", "results", name), "utf8")),
        name,
      ).not.toThrow();
    }
  });
});
