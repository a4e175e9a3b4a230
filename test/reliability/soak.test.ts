// The randomized soak (test/reliability/soak.ts) inside npm test: a short run on a new seed each time,
// printed first, so a failure names the command that reproduces it — and every seed that ever failed
// (soak-seeds.json), replayed as it failed. Set PI_CGC_SOAK_SEED to repeat one seed here.
import { randomInt } from "node:crypto";
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import type { BackendName } from "../helpers/backends.ts";
import { type ActionTable, runSoak, type SoakOptions, type SoakReport } from "./soak.ts";

interface FailedSeed {
  seed: number;
  run: number;
  steps: number;
  actions: ActionTable;
  found: string;
  /** The backends of the run that failed (run i on backends[i % n]); KùzuDB when absent. */
  backends?: BackendName[];
  /**
   * False where a run makes no fresh claim for certain: cgc's own index on FalkorDB Lite is never called fresh,
   * and whether a verified update or rebuild comes within the run's steps depends on the machine's load.
   */
  freshClaims?: boolean;
}

const FAILED_SEEDS = JSON.parse(readFileSync(new URL("./soak-seeds.json", import.meta.url), "utf8")) as FailedSeed[];

function reproduce(options: SoakOptions): string {
  const table = options.actions ? ` --actions ${options.actions}` : "";
  const backends = options.backends ? ` --backend ${options.backends.join(",")}` : "";
  return `npm run soak -- --runs ${options.runs} --seed ${options.seed} --steps ${options.steps} --first-run ${options.firstRun ?? 0}${table}${backends}`;
}

function expectClean(report: SoakReport, options: SoakOptions, freshClaims = true): void {
  console.log(`soak (${reproduce(options)}): ${JSON.stringify(report)}`);
  expect(report.violations, `reproduce with: ${reproduce(options)}`).toEqual([]);
  expect(report.steps).toBe(options.runs * options.steps);
  if (freshClaims) expect(report.freshChecks).toBeGreaterThan(0);
}

describe("the soak", () => {
  const seed = Number(process.env.PI_CGC_SOAK_SEED ?? randomInt(1, 2 ** 31));
  it(`3 sessions on a new seed (${seed}) keep every invariant`, async () => {
    const options = { runs: 3, seed, steps: 5 };
    console.log(`soak seed ${seed}: ${reproduce(options)}`);
    const report = await runSoak(options);
    expectClean(report, options);
    expect(Object.values(report.faults).reduce((sum, count) => sum + count, 0)).toBeGreaterThanOrEqual(3);
  }, 900_000);

  it.each(FAILED_SEEDS)(
    "seed $seed, run $run, which once failed: $found",
    async (failed) => {
      const options = {
        runs: 1,
        seed: failed.seed,
        firstRun: failed.run,
        steps: failed.steps,
        actions: failed.actions,
        backends: failed.backends,
      };
      expectClean(await runSoak(options), options, failed.freshClaims);
    },
    900_000,
  );
});
