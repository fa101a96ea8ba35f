import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["apps/*/src/**/*.test.ts", "packages/*/src/**/*.test.ts", "test/**/*.test.ts"],
    exclude: ["**/node_modules/**"],
    globalSetup: ["test/support/global-setup.ts"],
    // Fails a test that leaked a database pool (test/support/pool-leaks.ts).
    setupFiles: ["test/support/pool-leaks.ts"],
    pool: "forks",
    testTimeout: 30_000,
    hookTimeout: 60_000,
    teardownTimeout: 20_000,
  },
});
