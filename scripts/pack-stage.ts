// The last steps every package a partner installs shares (scripts/pack-schema.ts, scripts/pack-gateway-client.ts):
// its package.json, README and LICENSE beside the built dist/, and `npm pack`.
import { execFileSync } from "node:child_process";
import { cpSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { REPO_ROOT } from "./build.ts";

/** What differs between the packages' manifests; the rest comes from the root package.json or is the same. */
export interface StageManifest {
  name: string;
  description: string;
  engines: { node: string };
  dependencies?: Record<string, string>;
  peerDependencies?: Record<string, string>;
}

/**
 * Finishes `stage` (whose dist/ holds the built index.js and index.d.ts) and packs it into `destination`: drops
 * dist/'s source maps (they point at src/, which the tarball does not carry), copies the package's README and
 * the repository's LICENSE, writes package.json (the root's version and license; dist/ the only entry), and
 * returns the tarball's path.
 */
export function packStage(
  stage: string,
  pkgDir: string,
  destination: string,
  manifest: StageManifest,
): string {
  const dist = path.join(stage, "dist");
  for (const file of readdirSync(dist)) if (file.endsWith(".map")) rmSync(path.join(dist, file));
  cpSync(path.join(pkgDir, "README.md"), path.join(stage, "README.md"));
  cpSync(path.join(REPO_ROOT, "LICENSE"), path.join(stage, "LICENSE"));
  const root = JSON.parse(readFileSync(path.join(REPO_ROOT, "package.json"), "utf8"));
  const { name, description, engines, ...dependencies } = manifest;
  const full = {
    name,
    version: root.version,
    description,
    license: root.license,
    type: "module",
    exports: { ".": { types: "./dist/index.d.ts", default: "./dist/index.js" } },
    types: "./dist/index.d.ts",
    files: ["dist"],
    engines,
    ...dependencies,
  };
  writeFileSync(path.join(stage, "package.json"), `${JSON.stringify(full, null, 2)}\n`);
  mkdirSync(destination, { recursive: true });
  const packed = JSON.parse(
    execFileSync("npm", ["pack", "--json", "--loglevel=error", "--pack-destination", destination], {
      cwd: stage,
      encoding: "utf8",
      stdio: ["ignore", "pipe", "inherit"],
    }),
  ) as { filename: string }[];
  return path.join(destination, packed[0]!.filename);
}
