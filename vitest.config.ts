import { defineConfig } from "vitest/config";

// Integration suites spawn the real cgc and the real pi: generous timeouts, and files run
// in parallel only up to the machine's two cores so that timing-sensitive cases stay honest.
export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    testTimeout: 120_000,
    hookTimeout: 180_000,
    maxWorkers: 2,
    globalSetup: ["test/setup/scratch-dir.ts"],
  },
});
