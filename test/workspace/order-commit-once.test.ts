// An order batch commits an order one way, whatever brought its content (a single read, a list page, an
// event's payload): apps/worker/src/orders/commit-order.ts. Three copies of that step drifted once (issue 54).
import { readFile } from "node:fs/promises";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { REPO_ROOT, sourceFiles } from "../support/source-files.ts";

/** `file: count` of the worker's non-test sources that contain `pattern`. */
async function filesWith(pattern: RegExp): Promise<string[]> {
  const found: string[] = [];
  for (const file of await sourceFiles({ folders: ["apps/worker/src"], tests: false })) {
    const n = (await readFile(path.join(REPO_ROOT, file), "utf8")).match(pattern)?.length ?? 0;
    if (n > 0) found.push(`${file.split(path.sep).join("/")}: ${n}`);
  }
  return found;
}

describe("an order's commit step is written once", () => {
  it("emits `committed` only in commit-order.ts (once for an order applied, once for a failed apply)", async () => {
    expect(await filesWith(/emit\("committed"/g)).toEqual(["apps/worker/src/orders/commit-order.ts: 2"]);
  });

  it("observes the commit stage only there", async () => {
    expect(await filesWith(/observeCommitted\(/g)).toEqual([
      "apps/worker/src/orders/commit-order.ts: 1",
      "apps/worker/src/orders/observe-order-stage.ts: 1",
    ]);
  });
});
