// A vitest setup file: fails a test that leaves open a database pool it created (graphile-worker's habit).
// Its hooks are registered before the test file's, so with vitest's stacked hooks this afterEach runs after
// the file's own afterEach hooks: a pool the test closes there counts as closed. Pools made in beforeAll
// belong to the file and are not checked here.
import { trackPools } from "@loops-sync/db/connection/pool-tracker";
import { afterEach, beforeEach } from "vitest";

const tracker = trackPools();
let mark = 0;

beforeEach(() => {
  mark = tracker.mark();
});

afterEach(async () => {
  const leaked = tracker.openSince(mark);
  if (leaked.length === 0) return;
  // Closed here so one leak does not hold the file's database open for the tests after it.
  await Promise.all(leaked.map((pool) => pool.sql.end({ timeout: 0 }).catch(() => {})));
  const where = leaked.map((pool) => `- ${pool.applicationName}, made at\n${pool.createdAt}`).join("\n");
  throw new Error(
    `${leaked.length} database pool(s) made by this test were still open after its hooks ran; ` +
      `end each one (await sql.end()) in the test or in its afterEach:\n${where}`,
  );
});
