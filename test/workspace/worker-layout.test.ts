import { readdir } from "node:fs/promises";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const root = fileURLToPath(new URL("../../", import.meta.url));

/** The process's own files; everything else lives in a feature folder (`jobs/`, `orders/`, `forwarding/`…). */
const ROOT_FILE_LIMIT = 12;

describe("apps/worker/src", () => {
  it(`holds at most ${ROOT_FILE_LIMIT} files at its root, the rest in feature folders`, async () => {
    const entries = await readdir(path.join(root, "apps/worker/src"), { withFileTypes: true });
    const files = entries.filter((e) => e.isFile()).map((e) => e.name);
    expect(files).toContain("index.ts");
    expect(files.length, `files at the root: ${files.join(", ")}`).toBeLessThanOrEqual(ROOT_FILE_LIMIT);
  });
});
