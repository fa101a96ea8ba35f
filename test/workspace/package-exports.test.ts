import { existsSync } from "node:fs";
import { readdir, readFile } from "node:fs/promises";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const root = fileURLToPath(new URL("../../", import.meta.url));

/** Every file an `exports` map names (conditions and subpaths flattened); wildcard patterns are skipped. */
function targets(map: unknown): string[] {
  if (typeof map === "string") return map.includes("*") ? [] : [map];
  if (!map || typeof map !== "object") return [];
  return Object.values(map).flatMap((value) => targets(value));
}

async function manifests(): Promise<string[]> {
  const found = ["package.json"];
  for (const parent of ["apps", "packages"]) {
    for (const entry of await readdir(path.join(root, parent), { withFileTypes: true })) {
      const manifest = path.join(parent, entry.name, "package.json");
      if (entry.isDirectory() && existsSync(path.join(root, manifest))) found.push(manifest);
    }
  }
  return found;
}

describe("workspace package.json files", () => {
  it("point every exports entry at a file that exists", async () => {
    const list = await manifests();
    expect(list.length).toBeGreaterThan(1);
    const missing: string[] = [];
    for (const manifest of list) {
      const json = JSON.parse(await readFile(path.join(root, manifest), "utf8")) as { exports?: unknown };
      for (const target of targets(json.exports)) {
        if (!existsSync(path.join(root, path.dirname(manifest), target)))
          missing.push(`${manifest}: ${target}`);
      }
    }
    expect(missing).toEqual([]);
  });
});

// A subpath beyond "." offers one module, for the tests that drive it (`@loops-sync/worker/orders/order-applier`):
// its name is that file's path under src/, so an import says which file it reaches.
describe("subpath exports", () => {
  it("name the file under src/ they point at", async () => {
    const offenders: string[] = [];
    for (const manifest of await manifests()) {
      const json = JSON.parse(await readFile(path.join(root, manifest), "utf8")) as { exports?: unknown };
      if (!json.exports || typeof json.exports !== "object") continue;
      for (const [subpath, target] of Object.entries(json.exports)) {
        if (subpath === "." || !subpath.startsWith("./") || typeof target !== "string") continue;
        if (target !== `./src/${subpath.slice(2)}.ts`) offenders.push(`${manifest}: ${subpath} → ${target}`);
      }
    }
    expect(offenders).toEqual([]);
  });
});
