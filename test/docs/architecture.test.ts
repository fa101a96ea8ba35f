import { readdir, readFile } from "node:fs/promises";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const root = fileURLToPath(new URL("../../", import.meta.url));

/** Everything under `folder` that the map must name: every migration file, every app and package. */
async function entries(
  folder: string,
  pick: (name: string, isDirectory: boolean) => boolean,
): Promise<string[]> {
  const dirents = await readdir(path.join(root, folder), { withFileTypes: true });
  return dirents
    .filter((d) => pick(d.name, d.isDirectory()))
    .map((d) => d.name)
    .sort();
}

/** The names in `expected` that architecture.md does not mention as code (`name`). */
function unnamed(map: string, expected: readonly string[], asWritten: (name: string) => string): string[] {
  return expected.filter((name) => !map.includes(`\`${asWritten(name)}\``));
}

describe("docs/architecture.md", () => {
  it("names every migration file", async () => {
    const map = await readFile(path.join(root, "docs/architecture.md"), "utf8");
    const migrations = await entries("migrations", (name) => name.endsWith(".sql"));
    expect(migrations.length).toBeGreaterThan(0);
    expect(unnamed(map, migrations, (name) => name)).toEqual([]);
  });

  it("names every folder of apps/ and packages/", async () => {
    const map = await readFile(path.join(root, "docs/architecture.md"), "utf8");
    for (const parent of ["apps", "packages"]) {
      const folders = await entries(parent, (name, isDirectory) => isDirectory && !name.startsWith("."));
      expect(folders.length).toBeGreaterThan(0);
      expect(unnamed(map, folders, (name) => `${parent}/${name}`)).toEqual([]);
    }
  });
});
