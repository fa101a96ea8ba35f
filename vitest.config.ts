import { defineConfig } from "vitest/config";
import { SlowFirstSequencer } from "./test/support/sequencer.ts";

export default defineConfig({
  test: {
    include: ["apps/*/src/**/*.test.ts", "packages/*/src/**/*.test.ts", "test/**/*.test.ts"],
    exclude: ["**/node_modules/**"],
    globalSetup: ["test/support/global-setup.ts"],
    // Fails a test that leaked a database pool (test/support/pool-leaks.ts).
    setupFiles: ["test/support/pool-leaks.ts"],
    pool: "forks",
    // Three files at once, whatever the core count (vitest's default is cores - 1: one on a 2-core CI machine).
    // Most tests wait on child processes and Postgres, not the CPU; each file has its own database, roles and
    // free ports, so files do not collide (docs/testing.md).
    maxWorkers: 3,
    testTimeout: 30_000,
    hookTimeout: 60_000,
    teardownTimeout: 20_000,
    // The few files that wait longest start first, so none runs alone at the end (test/support/sequencer.ts).
    sequence: { sequencer: SlowFirstSequencer },
  },
});
