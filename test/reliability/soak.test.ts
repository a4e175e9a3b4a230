// A short run of the randomized soak (test/reliability/soak.ts) inside npm test, with a fixed seed: a
// failure here reproduces with `npm run soak -- --runs 3 --seed 20261130 --steps 5`.
import { expect, it } from "vitest";
import { runSoak } from "./soak.ts";

it("3 scripted sessions with random edits, prompts, commands and injected faults keep every invariant", async () => {
  const report = await runSoak({ runs: 3, seed: 20261130, steps: 5 });
  console.log(`soak: ${JSON.stringify(report)}`);
  expect(report.violations).toEqual([]);
  expect(report.steps).toBe(15);
  expect(Object.values(report.faults).reduce((sum, count) => sum + count, 0)).toBeGreaterThanOrEqual(3);
  expect(report.freshChecks).toBeGreaterThan(0);
}, 900_000);
