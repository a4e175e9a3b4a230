// DESIGN.md "Detection of changes made outside pi": the turn-boundary check (src/freshness/scan.ts
// `changedSince`, run at each prompt start and after each bash command) costs a directory walk and one
// stat per source file. Measured per 1 000 files on the 1 000- and 5 000-file repositories, warm cache,
// next to `git status --porcelain` on the same trees for comparison.
import { execFileSync } from "node:child_process";
import { changedSince } from "../src/freshness/scan.ts";
import { type FixtureRepo, scaledRepo } from "../test/helpers/repos.ts";
import { type BenchOptions, type BenchReport, interleave, log, ms, spread, stats, table } from "./harness.ts";

const ROUNDS = 20;
const SIZES = [1_000, 5_000];

export async function run(_options: BenchOptions): Promise<BenchReport> {
  const repos: FixtureRepo[] = [];
  try {
    for (const size of SIZES) {
      log(`change detection: creating a ${size}-file repository`);
      repos.push(scaledRepo(size));
    }
    const scanned = new Map<FixtureRepo, number>();
    const variants: Record<string, () => Promise<number>> = {};
    for (const repo of repos) {
      // Warm the cache, and learn how many files the check looks at.
      scanned.set(repo, changedSince(repo.path, Date.now()).scanned);
      execFileSync("git", ["status", "--porcelain"], { cwd: repo.path });
      variants[`changedSince:${repo.name}`] = async () => {
        const since = Date.now();
        const started = performance.now();
        const result = changedSince(repo.path, since);
        const elapsed = performance.now() - started;
        if (result.scanned !== scanned.get(repo)) throw new Error("the scan saw a different number of files");
        return elapsed;
      };
      variants[`git:${repo.name}`] = async () => {
        const started = performance.now();
        execFileSync("git", ["status", "--porcelain"], { cwd: repo.path });
        return performance.now() - started;
      };
    }
    log(`change detection: ${ROUNDS} interleaved rounds`);
    const samples = await interleave(variants, ROUNDS);
    const rows = repos.map((repo) => {
      const files = scanned.get(repo) ?? 0;
      const scan = samples[`changedSince:${repo.name}`] ?? [];
      const git = samples[`git:${repo.name}`] ?? [];
      const perThousand = scan.map((value) => (value / files) * 1000);
      return [
        `${repo.files.length} (${files} scanned)`,
        spread(scan),
        spread(perThousand),
        spread(git),
        `${(stats(scan).median / stats(git).median).toFixed(2)}×`,
      ];
    });
    const markdown = [
      `${ROUNDS} interleaved rounds per repository (\`scaledRepo\`: standard-library Python files), warm cache (one`,
      "untimed run first), in the bench process. `changedSince(root, now)` walks the tree (skipping the folders cgc",
      "ignores) and stats every source file; `git status --porcelain` is spawned on the same tree for comparison.",
      "Median (min–max, n).",
      "",
      table(["files", "`changedSince`", "per 1 000 files", "`git status --porcelain`", "changedSince / git"], rows),
      "",
      `- The check runs synchronously on pi's event loop at each prompt start and after each \`bash\` result:` +
        ` ${ms(stats(samples[`changedSince:${repos.at(-1)?.name}`] ?? []).median)} on the largest repository.`,
    ].join("\n");
    return { title: "Change detection at the turn boundary", markdown };
  } finally {
    for (const repo of repos) repo.cleanup();
  }
}
