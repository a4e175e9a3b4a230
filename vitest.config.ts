import { defineConfig } from "vitest/config";
import { BaseSequencer, type TestSpecification } from "vitest/node";

// The longest files, longest first (their durations on a clean clone, minutes under CI's load). Without a
// record of earlier runs vitest starts the largest files first, and these are small: the KùzuDB parity
// replay (a quarter of an hour) then started last and ran alone at the end. Started first, the two
// workers share out the rest around them.
const LONGEST_FIRST = [
  "test/integration/engine-parity.test.ts",
  "test/reliability/faults.test.ts",
  "test/integration/engine-parity-neo4j.test.ts",
  "test/integration/engine-parity-falkor.test.ts",
  "test/reliability/soak.test.ts",
  "test/integration/backend-matrix.test.ts",
  "test/integration/engine-parity-late.test.ts",
  "test/integration/worktree.test.ts",
  "test/integration/freshness.test.ts",
  "test/integration/index-parity.test.ts",
];

class LongestFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const rank = (file: TestSpecification) => {
      const index = LONGEST_FIRST.findIndex((path) => file.moduleId.endsWith(path));
      return index < 0 ? LONGEST_FIRST.length : index;
    };
    // Array.prototype.sort is stable: the others keep vitest's own order.
    return (await super.sort(files)).sort((a, b) => rank(a) - rank(b));
  }
}

// Integration suites spawn the real cgc and the real pi: generous timeouts, and files run
// in parallel only up to the machine's two cores so that timing-sensitive cases stay honest.
export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    testTimeout: 300_000,
    hookTimeout: 180_000,
    maxWorkers: 2,
    globalSetup: ["test/setup/build-dist.ts", "test/setup/scratch-dir.ts"],
    setupFiles: ["test/setup/test-margins.ts"],
    sequence: { sequencer: LongestFirst },
  },
});
