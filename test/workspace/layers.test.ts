import { readdir, readFile } from "node:fs/promises";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const root = fileURLToPath(new URL("../../", import.meta.url));

async function sources(folder: string): Promise<string[]> {
  const entries = await readdir(path.join(root, folder), { recursive: true, withFileTypes: true });
  return entries
    .filter((e) => e.isFile() && e.name.endsWith(".ts"))
    .map((e) => path.relative(root, path.join(e.parentPath, e.name)));
}

/** Files of `folder` with an import or dynamic import whose specifier resolves into `forbidden`. */
async function importing(folder: string, forbidden: string): Promise<string[]> {
  const offenders: string[] = [];
  for (const file of await sources(folder)) {
    const text = await readFile(path.join(root, file), "utf8");
    for (const [, specifier] of text.matchAll(/(?:from|import\()\s*["']([^"']+)["']/g)) {
      if (!specifier!.startsWith(".")) continue;
      const target = path.relative(root, path.resolve(root, path.dirname(file), specifier!));
      if (target === forbidden || target.startsWith(`${forbidden}/`))
        offenders.push(`${file} → ${specifier}`);
    }
  }
  return offenders;
}

describe("bench/ and test/ share code only through testkit/", () => {
  it("bench imports nothing from test/", async () => {
    expect(await importing("bench", "test")).toEqual([]);
  });
  it("test imports nothing from bench/", async () => {
    expect(await importing("test", "bench")).toEqual([]);
  });
  it("testkit imports nothing from test/ or bench/", async () => {
    expect([...(await importing("testkit", "test")), ...(await importing("testkit", "bench"))]).toEqual([]);
  });
});

// A path into a package's src/ bypasses its exports map, so what the package offers goes unchecked.
describe("code outside the workspace packages imports them by name", () => {
  for (const folder of ["test", "bench", "testkit", "scripts", "examples"]) {
    it(`${folder}/ imports no module by a path into packages/ or apps/`, async () => {
      expect([...(await importing(folder, "packages")), ...(await importing(folder, "apps"))]).toEqual([]);
    });
  }
});

const APPS = ["cli", "receiver", "sandbox", "worker"];

/** Files under packages/ that import an app, by its package name or by a path into apps/. */
async function packagesImportingApps(): Promise<string[]> {
  const offenders: string[] = [];
  for (const file of await sources("packages")) {
    if (file.includes(`${path.sep}node_modules${path.sep}`)) continue;
    const text = await readFile(path.join(root, file), "utf8");
    for (const [, specifier] of text.matchAll(/(?:from|import\()\s*["']([^"']+)["']/g)) {
      const app = /^@loops-sync\/([^/]+)/.exec(specifier!)?.[1];
      const target = path.relative(root, path.resolve(root, path.dirname(file), specifier!));
      if ((app && APPS.includes(app)) || (specifier!.startsWith(".") && target.startsWith("apps/")))
        offenders.push(`${file} → ${specifier}`);
    }
  }
  return offenders;
}

describe("layers point one way: apps → packages", () => {
  it("no file under packages/ imports an app", async () => {
    expect(await packagesImportingApps()).toEqual([]);
  });
  it("no package depends on an app", async () => {
    const offenders: string[] = [];
    for (const name of await readdir(path.join(root, "packages"))) {
      const manifest = JSON.parse(await readFile(path.join(root, "packages", name, "package.json"), "utf8"));
      const deps = { ...manifest.dependencies, ...manifest.devDependencies };
      for (const app of APPS)
        if (`@loops-sync/${app}` in deps) offenders.push(`${name} → @loops-sync/${app}`);
    }
    expect(offenders).toEqual([]);
  });
});
