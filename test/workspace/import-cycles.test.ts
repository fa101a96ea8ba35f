import { readdir, readFile } from "node:fs/promises";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const root = fileURLToPath(new URL("../../", import.meta.url));

/** Every folder of TypeScript the project holds; relative imports never leave one. */
const SOURCE_FOLDERS = ["apps", "packages", "test", "bench", "scripts", "testkit", "examples"];

/** Each .ts file of `folder` with the files of `folder` it imports by a relative path (types included). */
async function importGraph(folder: string): Promise<Map<string, string[]>> {
  const graph = new Map<string, string[]>();
  const entries = await readdir(path.join(root, folder), { recursive: true, withFileTypes: true });
  for (const e of entries) {
    if (!e.isFile() || !e.name.endsWith(".ts") || e.parentPath.includes("node_modules")) continue;
    const file = path.relative(root, path.join(e.parentPath, e.name));
    const text = await readFile(path.join(root, file), "utf8");
    graph.set(
      file,
      [...text.matchAll(/(?:from|import\()\s*["'](\.[^"']+)["']/g)].map((m) =>
        path.relative(root, path.resolve(root, path.dirname(file), m[1]!)),
      ),
    );
  }
  return graph;
}

/** The import cycles of `graph`, each as the files around it. */
function cycles(graph: Map<string, string[]>): string[][] {
  const found: string[][] = [];
  const state = new Map<string, "open" | "done">();
  const visit = (file: string, stack: string[]) => {
    state.set(file, "open");
    stack.push(file);
    for (const next of graph.get(file) ?? []) {
      if (!graph.has(next)) continue;
      if (state.get(next) === "open") found.push(stack.slice(stack.indexOf(next)));
      else if (!state.has(next)) visit(next, stack);
    }
    stack.pop();
    state.set(file, "done");
  };
  for (const file of graph.keys()) if (!state.has(file)) visit(file, []);
  return found;
}

describe("import cycles", () => {
  // Files import one way, types included: a cycle means two files share one concern, or one of them holds
  // a type both need. The order batch's steps, for instance: claim → fetch → apply → settle → route.
  for (const folder of SOURCE_FOLDERS) {
    it(`${folder} has none`, async () => {
      expect(cycles(await importGraph(folder))).toEqual([]);
    });
  }

  it("are found, type-only imports included", () => {
    const graph = new Map([
      ["a.ts", ["b.ts"]],
      ["b.ts", ["c.ts"]],
      ["c.ts", ["a.ts"]],
      ["d.ts", ["a.ts"]],
    ]);
    expect(cycles(graph)).toEqual([["a.ts", "b.ts", "c.ts"]]);
  });
});
