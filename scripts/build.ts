// Emits JavaScript with source maps for every workspace package (pnpm-workspace.yaml's globs), into
// each package's dist/: one ES module per entry (package.json `exports`, and src/main.ts where there
// is one). Dependencies that pnpm patches (patches/) are inlined, so the fix travels with the code;
// other npm packages and the workspace's own stay imports. scripts/package.ts builds the packed CLI
// the same way with the workspace inlined too. Tests and development run the TypeScript directly.
//   node scripts/build.ts
import { existsSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { isBuiltin } from "node:module";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "rolldown";
import { parse } from "yaml";

export const REPO_ROOT = fileURLToPath(new URL("..", import.meta.url));

export interface WorkspacePackage {
  dir: string;
  manifest: {
    name: string;
    version: string;
    exports?: Record<string, string>;
    dependencies?: Record<string, string>;
  };
}

const workspaceConfig = () =>
  parse(readFileSync(path.join(REPO_ROOT, "pnpm-workspace.yaml"), "utf8")) as {
    packages: string[];
    patchedDependencies?: Record<string, string>;
  };

/** Every workspace package, from pnpm-workspace.yaml's `dir/*` globs. */
export function workspacePackages(): WorkspacePackage[] {
  return workspaceConfig().packages.flatMap((glob) => {
    const parent = path.join(REPO_ROOT, glob.replace(/\/\*$/, ""));
    return readdirSync(parent)
      .map((name) => path.join(parent, name))
      .filter((dir) => existsSync(path.join(dir, "package.json")))
      .map((dir) => ({ dir, manifest: JSON.parse(readFileSync(path.join(dir, "package.json"), "utf8")) }));
  });
}

/** Names of the npm packages pnpm patches (`postgres` for `postgres@3.4.9`). */
export function patchedPackages(): Set<string> {
  return new Set(
    Object.keys(workspaceConfig().patchedDependencies ?? {}).map((k) => k.replace(/@[^@]+$/, "")),
  );
}

/** `hono/streaming` → `hono`; `@hono/node-server/x` → `@hono/node-server`. */
export function packageNameOf(specifier: string): string {
  const parts = specifier.split("/");
  return specifier.startsWith("@") ? parts.slice(0, 2).join("/") : parts[0]!;
}

/** Entry name → source file: `exports` values (./src/index.ts → index) and src/main.ts. */
function entriesOf({ dir, manifest }: WorkspacePackage): Record<string, string> {
  const entries: Record<string, string> = {};
  for (const target of Object.values(manifest.exports ?? {})) {
    entries[path.basename(target).replace(/\.ts$/, "")] = path.join(dir, target);
  }
  if (existsSync(path.join(dir, "src/main.ts"))) entries.main = path.join(dir, "src/main.ts");
  return entries;
}

export interface BuildOptions {
  /** Default: the package's dist/. */
  outDir?: string;
  /** Inline the workspace packages it imports (a self-contained bundle). Default: false. */
  inlineWorkspace?: boolean;
}

/** Bundles one package; returns the npm packages its output still imports. */
export async function buildPackage(
  pkg: WorkspacePackage,
  { outDir = path.join(pkg.dir, "dist"), inlineWorkspace = false }: BuildOptions = {},
): Promise<Set<string>> {
  const patched = patchedPackages();
  rmSync(outDir, { recursive: true, force: true });
  const inlined = (name: string) => (inlineWorkspace && name.startsWith("@loops-sync/")) || patched.has(name);
  const output = await build({
    input: entriesOf(pkg),
    platform: "node",
    cwd: pkg.dir,
    logLevel: "warn",
    external: (id) => !id.startsWith(".") && !path.isAbsolute(id) && !inlined(packageNameOf(id)),
    output: { dir: outDir, format: "esm", sourcemap: true, entryFileNames: "[name].js" },
  });
  const imported = new Set<string>();
  const chunks = new Set(output.output.map((o) => o.fileName));
  for (const chunk of output.output) {
    if (chunk.type !== "chunk") continue;
    for (const id of [...chunk.imports, ...chunk.dynamicImports]) {
      if (!isBuiltin(id) && !chunks.has(id) && !id.startsWith(".")) imported.add(packageNameOf(id));
    }
  }
  return imported;
}

if (import.meta.main) {
  for (const pkg of workspacePackages()) {
    await buildPackage(pkg);
    console.log(`built ${pkg.manifest.name} → ${path.relative(REPO_ROOT, path.join(pkg.dir, "dist"))}`);
  }
}
