// Packs @loops-sync/gateway-client (the Loops client's typed writes, sent through loops-sync's gateway) into a
// tarball a partner's backend installs with npm, and prints its path as the last line:
//   node scripts/pack-gateway-client.ts [<destination>]     (default .dist/; `pnpm run package` calls it)
//   npm install ./.dist/loops-sync-gateway-client-0.1.0.tgz
// The tarball holds dist/index.js (rolldown, as scripts/build.ts builds, with the workspace's loops-client
// inlined), its declarations (tsc --emitDeclarationOnly over the packages it inlines, their workspace imports
// rewritten to relative paths) and a package.json whose dependencies are the npm packages the bundle imports,
// pinned to the versions the lockfile installed. Node 22 or newer (undici 7 and zod 4 run there).
import { execFileSync } from "node:child_process";
import { existsSync, readdirSync, readFileSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { buildPackage, REPO_ROOT, workspacePackages } from "./build.ts";
import { packStage } from "./pack-stage.ts";

const CLIENT = "@loops-sync/gateway-client";
/** The workspace packages its bundle inlines, whose declarations travel with it. */
const INLINED = ["gateway-client", "loops-client", "tracing"];

function installedVersion(name: string): string {
  for (const dir of INLINED.map((p) => path.join(REPO_ROOT, "packages", p))) {
    const manifest = path.join(dir, "node_modules", name, "package.json");
    if (existsSync(manifest)) return JSON.parse(readFileSync(realpathSync(manifest), "utf8")).version;
  }
  throw new Error(
    `${name} is imported by the gateway client's bundle but installed for none of its packages`,
  );
}

/** Every `.d.ts` under `dir`. */
function declarations(dir: string): string[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile() && e.name.endsWith(".d.ts"))
    .map((e) => path.join(e.parentPath, e.name));
}

/** Declarations of the inlined packages under `types/<package>/src/`, their imports made relative. */
function emitDeclarations(stage: string): void {
  const out = path.join(stage, "dist", "types");
  const tsconfig = path.join(stage, "tsconfig.pack.json");
  const sources = INLINED.map((p) => path.join(REPO_ROOT, "packages", p, "src"));
  writeFileSync(
    tsconfig,
    JSON.stringify({
      extends: path.join(REPO_ROOT, "tsconfig.base.json"),
      compilerOptions: {
        noEmit: false,
        declaration: true,
        emitDeclarationOnly: true,
        rootDir: path.join(REPO_ROOT, "packages"),
        outDir: out,
        typeRoots: [path.join(REPO_ROOT, "packages/loops-client/node_modules/@types")],
      },
      include: sources,
      exclude: sources.map((s) => path.join(s, "**/*.test.ts")),
    }),
  );
  const tsc = path.join(REPO_ROOT, "node_modules/typescript/bin/tsc");
  execFileSync(process.execPath, [tsc, "-p", tsconfig], { cwd: REPO_ROOT, stdio: "inherit" });
  rmSync(tsconfig);
  for (const file of declarations(out)) {
    const text = readFileSync(file, "utf8")
      // tsc keeps the sources' `./x.ts` specifiers; the files beside them are `./x.js`.
      .replace(/(from\s+"\.{1,2}\/[^"]+)\.ts"/g, '$1.js"')
      .replace(/(import\("\.{1,2}\/[^"]+)\.ts"\)/g, '$1.js")')
      .replace(/"@loops-sync\/([a-z-]+)"/g, (whole, name: string) => {
        if (!INLINED.includes(name)) return whole;
        const target = path.join(out, name, "src", "index.js");
        const relative = path.relative(path.dirname(file), target);
        return `"${relative.startsWith(".") ? relative : `./${relative}`}"`;
      });
    writeFileSync(file, text);
  }
  writeFileSync(
    path.join(stage, "dist", "index.d.ts"),
    'export * from "./types/gateway-client/src/index.js";\n',
  );
}

export async function packGatewayClient(destination = path.join(REPO_ROOT, ".dist")): Promise<string> {
  const pkg = workspacePackages().find((p) => p.manifest.name === CLIENT);
  if (!pkg) throw new Error(`${CLIENT} is not in the workspace`);
  const stage = path.join(destination, "gateway-client");
  rmSync(stage, { recursive: true, force: true });
  const dist = path.join(stage, "dist");
  const imported = await buildPackage(pkg, { outDir: dist, inlineWorkspace: true });
  emitDeclarations(stage);
  return packStage(stage, pkg.dir, destination, {
    name: CLIENT,
    description: "Typed writes to the Loops Partner API through loops-sync's gateway (createGatewayClient)",
    engines: { node: ">=22" },
    dependencies: Object.fromEntries([...imported].sort().map((n) => [n, installedVersion(n)])),
  });
}

if (import.meta.main)
  console.log(await packGatewayClient(process.argv[2] ? path.resolve(process.argv[2]) : undefined));
