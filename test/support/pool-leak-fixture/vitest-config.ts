import { fileURLToPath } from "node:url";
import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    root: fileURLToPath(new URL("../../../", import.meta.url)),
    include: ["test/support/pool-leak-fixture/leaky-tests.ts"],
    setupFiles: ["test/support/pool-leaks.ts"],
  },
});
