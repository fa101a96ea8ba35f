import { readdir } from "node:fs/promises";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const root = fileURLToPath(new URL("../../", import.meta.url));

/**
 * How many files each of the larger workspaces keeps at its root: its own (index.ts, the process's start,
 * shared kinds); everything else lives in a feature folder (`jobs/`, `orders/`, `order-queue/`, `menus/`…).
 */
const ROOT_FILE_LIMITS: Record<string, number> = {
  "apps/worker/src": 12,
  "packages/db/src": 6,
  "packages/replica/src": 4,
};

describe.each(Object.entries(ROOT_FILE_LIMITS))("%s", (dir, limit) => {
  it(`holds at most ${limit} files at its root, the rest in feature folders`, async () => {
    const entries = await readdir(path.join(root, dir), { withFileTypes: true });
    const files = entries.filter((e) => e.isFile()).map((e) => e.name);
    expect(files).toContain("index.ts");
    expect(files.length, `files at the root: ${files.join(", ")}`).toBeLessThanOrEqual(limit);
  });
});
