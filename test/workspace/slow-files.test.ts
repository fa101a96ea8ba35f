// The sequencer starts the files of SLOW_FILES first (vitest.config.ts): a renamed or removed file would be
// skipped silently and its run would end the suite again.
import { existsSync } from "node:fs";
import path from "node:path";
import { expect, it } from "vitest";
import { SLOW_FILES } from "../support/sequencer.ts";

const root = path.resolve(import.meta.dirname, "../..");

it("every file the sequencer starts first exists", () => {
  expect(SLOW_FILES.length).toBeGreaterThan(0);
  expect(SLOW_FILES.filter((file) => !existsSync(path.join(root, file)))).toEqual([]);
});
