// Packs @loops-sync/schema (the replica's Kysely types and the change feed's reader) into a tarball a partner's
// backend installs with npm, and prints its path as the last line:
//   node scripts/pack-schema.ts [<destination>]     (default .dist/; `pnpm run package` calls it)
//   npm install ./.dist/loops-sync-schema-0.1.0.tgz postgres kysely
// The tarball holds dist/ (ES modules built by rolldown as scripts/build.ts builds, with `.d.ts` from
// `tsc --emitDeclarationOnly`) and a package.json whose `exports` point at them. postgres and kysely are
// peer dependencies: the partner's own pool and Kysely are the ones it runs on. It supports Node 20 and newer,
// so kysely 0.28 is in the peer range (0.29 needs Node 22).
import { execFileSync } from "node:child_process";
import { readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { buildPackage, REPO_ROOT, workspacePackages } from "./build.ts";
import { packStage } from "./pack-stage.ts";

const SCHEMA = "@loops-sync/schema";
/** What the built code may import: the partner's own copies. */
export const SCHEMA_PEERS = { postgres: "^3.4.9", kysely: "^0.28.0 || ^0.29.0" };

/** The declarations of `src/`, emitted beside the built modules (`.ts` imports rewritten to `.js`). */
function emitDeclarations(pkgDir: string, outDir: string): void {
  const tsconfig = path.join(outDir, "..", "tsconfig.pack.json");
  writeFileSync(
    tsconfig,
    JSON.stringify({
      extends: path.join(REPO_ROOT, "tsconfig.base.json"),
      compilerOptions: {
        noEmit: false,
        declaration: true,
        emitDeclarationOnly: true,
        rootDir: path.join(pkgDir, "src"),
        outDir,
        // This file lives in the stage, outside the package: resolve @types/node from the package.
        typeRoots: [path.join(pkgDir, "node_modules/@types")],
      },
      include: [path.join(pkgDir, "src")],
      exclude: [path.join(pkgDir, "src/**/*.test.ts")],
    }),
  );
  const tsc = path.join(REPO_ROOT, "node_modules/typescript/bin/tsc");
  execFileSync(process.execPath, [tsc, "-p", tsconfig], { cwd: pkgDir, stdio: "inherit" });
  rmSync(tsconfig);
  // tsc keeps the sources' `./x.ts` specifiers in declarations; the files beside them are `./x.js`.
  for (const file of readdirSync(outDir).filter((f) => f.endsWith(".d.ts"))) {
    const text = readFileSync(path.join(outDir, file), "utf8");
    writeFileSync(path.join(outDir, file), text.replace(/(from\s+"\.{1,2}\/[^"]+)\.ts"/g, '$1.js"'));
  }
}

export async function packSchema(destination = path.join(REPO_ROOT, ".dist")): Promise<string> {
  const pkg = workspacePackages().find((p) => p.manifest.name === SCHEMA);
  if (!pkg) throw new Error(`${SCHEMA} is not in the workspace`);
  const stage = path.join(destination, "schema");
  rmSync(stage, { recursive: true, force: true });
  const dist = path.join(stage, "dist");
  const imported = await buildPackage(pkg, { outDir: dist });
  const unexpected = [...imported].filter((name) => !(name in SCHEMA_PEERS));
  if (unexpected.length > 0) {
    throw new Error(`${SCHEMA}'s build imports ${unexpected.join(", ")}; only its peers may be imported`);
  }
  emitDeclarations(pkg.dir, dist);
  return packStage(stage, pkg.dir, destination, {
    name: SCHEMA,
    description:
      "Types of the loops-sync replica for Kysely, and the change feed's reader (readChanges, followChanges) over postgres.js",
    engines: { node: ">=20" },
    peerDependencies: SCHEMA_PEERS,
  });
}

if (import.meta.main)
  console.log(await packSchema(process.argv[2] ? path.resolve(process.argv[2]) : undefined));
