import { readdir, readFile } from "node:fs/promises";
import path from "node:path";
import { fileURLToPath } from "node:url";

/** The repository's root directory. */
export const REPO_ROOT = fileURLToPath(new URL("../../", import.meta.url));

export interface SourceFilesOptions {
  /** Folders under the root to walk. Default: apps and packages. */
  folders?: readonly string[];
  /** Which file names count. Default: `.ts` files. */
  names?: RegExp;
  /** Whether `*.test.ts` files count. Default: true. */
  tests?: boolean;
}

/** The files of `folders` (paths relative to the root), dependencies (node_modules) left out. */
export async function sourceFiles({
  folders = ["apps", "packages"],
  names = /\.ts$/,
  tests = true,
}: SourceFilesOptions = {}): Promise<string[]> {
  const files: string[] = [];
  for (const folder of folders) {
    const entries = await readdir(path.join(REPO_ROOT, folder), { recursive: true, withFileTypes: true });
    for (const e of entries) {
      const file = path.relative(REPO_ROOT, path.join(e.parentPath, e.name));
      if (!e.isFile() || !names.test(e.name) || file.split(path.sep).includes("node_modules")) continue;
      if (!tests && e.name.endsWith(".test.ts")) continue;
      files.push(file);
    }
  }
  return files;
}

/**
 * What `find` reports in the `.ts` and `.sql` files of apps and packages inside `owner` (`inside: true`) or
 * outside it: the writers tests' scan, one module owning a table's writes.
 */
export async function findByOwner(
  owner: string,
  inside: boolean,
  find: (file: string, text: string) => string[],
): Promise<string[]> {
  const found: string[] = [];
  for (const file of await sourceFiles({ names: /\.(ts|sql)$/ }))
    if (file.startsWith(`${owner}${path.sep}`) === inside)
      found.push(...find(file, await readFile(path.join(REPO_ROOT, file), "utf8")));
  return found;
}
