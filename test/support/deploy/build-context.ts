// What `docker build .` would send: repository files minus the .dockerignore patterns.
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { REPO_ROOT } from "./read-yaml.ts";

/** .dockerignore lines as patterns (`!` re-includes); comments and blanks dropped. */
export function parseDockerignore(text: string): string[] {
  return text
    .split(/\r?\n/)
    .map((l) => l.trim())
    .filter((l) => l !== "" && !l.startsWith("#"))
    .map((l) => l.replace(/^(!?)\/+/, "$1").replace(/\/+$/, ""));
}

/**
 * Docker's rule: the last matching pattern wins, and a pattern that matches a folder excludes
 * everything in it.
 */
export function isDockerIgnored(patterns: readonly string[], relativePath: string): boolean {
  const normal = path.posix.normalize(relativePath.replace(/^\.\//, ""));
  const parts = normal.split("/");
  const candidates = parts.map((_, i) => parts.slice(0, i + 1).join("/"));
  let ignored = false;
  for (const pattern of patterns) {
    const negate = pattern.startsWith("!");
    const glob = negate ? pattern.slice(1) : pattern;
    if (candidates.some((c) => path.matchesGlob(c, glob))) ignored = !negate;
  }
  return ignored;
}

/** A predicate: the path exists in the repository and .dockerignore keeps it in the context. */
export function readBuildContext(): (relativePath: string) => boolean {
  const ignoreFile = path.join(REPO_ROOT, ".dockerignore");
  const patterns = existsSync(ignoreFile) ? parseDockerignore(readFileSync(ignoreFile, "utf8")) : [];
  return (relativePath) =>
    (relativePath === "." || !isDockerIgnored(patterns, relativePath)) &&
    existsSync(path.join(REPO_ROOT, relativePath));
}
