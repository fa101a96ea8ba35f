import { readdir, readFile } from "node:fs/promises";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const root = fileURLToPath(new URL("../../", import.meta.url));

/** At most one error class per boundary; a new failure is a new `kind` or `code` of one of them. */
const MAX_ERROR_CLASSES = 8;

/** `class X extends Error`, `class X<K extends …> extends RangeError`, …: a subclass of any error class. */
const ERROR_CLASS = /\bclass\s+(\w+)(?:\s*<[^>]*>)?\s+extends\s+\w*Error\b/g;

/** Every `Error` subclass declared in apps/ and packages/ outside tests, as `file: Name`. */
async function errorClasses(): Promise<string[]> {
  const found: string[] = [];
  for (const folder of ["apps", "packages"]) {
    const entries = await readdir(path.join(root, folder), { recursive: true, withFileTypes: true });
    for (const entry of entries) {
      const file = path.relative(root, path.join(entry.parentPath, entry.name));
      if (!entry.isFile() || !file.endsWith(".ts") || file.endsWith(".test.ts")) continue;
      if (file.split(path.sep).includes("node_modules")) continue;
      const text = await readFile(path.join(root, file), "utf8");
      for (const [, name] of text.matchAll(ERROR_CLASS)) found.push(`${file}: ${name}`);
    }
  }
  return found.sort();
}

describe("errors are kinds, not a taxonomy of classes", () => {
  it(`declares at most ${MAX_ERROR_CLASSES} Error subclasses in apps/ and packages/`, async () => {
    const classes = await errorClasses();
    expect(classes, classes.join("\n")).toContain("packages/loops-client/src/errors.ts: LoopsError");
    expect(classes.length, classes.join("\n")).toBeLessThanOrEqual(MAX_ERROR_CLASSES);
  });
});
