import { readdir } from "node:fs/promises";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const root = fileURLToPath(new URL("../../", import.meta.url));

/** Code under test/ that is not a test and must not move into test/support/, with the reason. */
const ALLOWED: Record<string, string> = {
  "test/package/schema-partner/check.ts":
    "a partner's project, copied whole into a scratch folder and type-checked against the packed package",
  "test/package/gateway-partner/check.ts":
    "a partner's backend, copied whole into a scratch folder and type-checked against the packed gateway client",
};

/** Every .ts file under test/ that is neither a test file nor in test/support/. */
async function helpersOutsideSupport(): Promise<string[]> {
  const entries = await readdir(path.join(root, "test"), { recursive: true, withFileTypes: true });
  return entries
    .filter((e) => e.isFile() && e.name.endsWith(".ts") && !e.name.endsWith(".test.ts"))
    .map((e) => path.relative(root, path.join(e.parentPath, e.name)).split(path.sep).join("/"))
    .filter((file) => !file.startsWith("test/support/") && !(file in ALLOWED))
    .sort();
}

// One place to look for a helper (graphile-worker's habit): a reader of a test finds what it leans on
// in test/support/ or testkit/, never in a sibling folder of another area.
describe("test helpers live in test/support/", () => {
  it("no helper module sits beside the tests outside test/support/", async () => {
    expect(await helpersOutsideSupport()).toEqual([]);
  });

  it("every allowed exception still exists (so the list cannot rot)", async () => {
    const entries = await readdir(path.join(root, "test"), { recursive: true, withFileTypes: true });
    const files = new Set(
      entries.map((e) => path.relative(root, path.join(e.parentPath, e.name)).split(path.sep).join("/")),
    );
    expect(Object.keys(ALLOWED).filter((file) => !files.has(file))).toEqual([]);
  });
});
