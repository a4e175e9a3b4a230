// Detection of changes made outside pi (ADR 0007): the turn-boundary check (src/workspace/tracker.ts
// `check`, run at each prompt start and after each bash command) costs a directory walk, one stat per
// source file and a comparison with the previous snapshot. Measured per 1 000 files on the 1 000- and 5 000-file repositories, warm cache,
// next to `git status --porcelain` on the same trees for comparison, and on the same trees with a .gitignore
// (the tracker then matches every path against its lines, as cgc's walk does).
import { execFileSync } from "node:child_process";
import { createChangeTracker } from "../src/workspace/tracker.ts";
import { snapshotTree } from "../src/workspace/tree.ts";
import { type FixtureRepo, scaledRepo } from "../test/helpers/repos.ts";
import { type BenchOptions, type BenchReport, interleave, log, ms, spread, stats, table } from "./harness.ts";

const ROUNDS = 20;
const SIZES = [1_000, 5_000];

/** Most of the .gitignore GitHub suggests for Python: lines that take none of the bench's files out. */
const PYTHON_GITIGNORE = [
  "__pycache__/",
  "*.py[cod]",
  "*$py.class",
  "*.so",
  ".Python",
  "build/",
  "develop-eggs/",
  "dist/",
  "downloads/",
  "eggs/",
  ".eggs/",
  "parts/",
  "sdist/",
  "wheels/",
  "*.egg-info/",
  ".installed.cfg",
  "*.egg",
  "MANIFEST",
  "*.manifest",
  "*.spec",
  "pip-log.txt",
  "htmlcov/",
  ".tox/",
  ".coverage",
  ".cache",
  "nosetests.xml",
  "coverage.xml",
  "*.cover",
  ".pytest_cache/",
  ".env",
  ".venv",
  "env/",
  "venv/",
  ".mypy_cache/",
].join("\n");

export async function run(_options: BenchOptions): Promise<BenchReport> {
  const repos: FixtureRepo[] = [];
  /** The same tree as each of `repos`, with PYTHON_GITIGNORE. */
  const ignoring = new Map<FixtureRepo, FixtureRepo>();
  try {
    for (const size of SIZES) {
      log(`change detection: creating a ${size}-file repository, and one more with a .gitignore`);
      const repo = scaledRepo(size);
      repos.push(repo);
      ignoring.set(repo, scaledRepo(size, { extraFiles: { ".gitignore": PYTHON_GITIGNORE } }));
    }
    const scanned = new Map<FixtureRepo, number>();
    const variants: Record<string, () => Promise<number>> = {};
    const checkOf = (tree: FixtureRepo) => {
      const tracker = createChangeTracker({ PI_CODING_AGENT_DIR: tree.path });
      tracker.startDrift(tree.path, Date.now());
      return async () => {
        const started = performance.now();
        const changed = tracker.check();
        const elapsed = performance.now() - started;
        if (changed.length > 0) throw new Error(`the check saw changes in an untouched tree: ${changed[0]}`);
        return elapsed;
      };
    };
    for (const repo of repos) {
      const ignored = ignoring.get(repo) as FixtureRepo;
      // Warm the cache, and learn how many files the check looks at.
      scanned.set(repo, snapshotTree(repo.path).size);
      snapshotTree(ignored.path);
      execFileSync("git", ["status", "--porcelain"], { cwd: repo.path });
      variants[`check:${repo.name}`] = checkOf(repo);
      variants[`ignoring:${repo.name}`] = checkOf(ignored);
      // The walk and one stat per file alone: what the check of times against a moment cost before.
      variants[`walk:${repo.name}`] = async () => {
        const started = performance.now();
        snapshotTree(repo.path);
        return performance.now() - started;
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
      const scan = samples[`check:${repo.name}`] ?? [];
      const git = samples[`git:${repo.name}`] ?? [];
      const walk = samples[`walk:${repo.name}`] ?? [];
      const withIgnore = samples[`ignoring:${repo.name}`] ?? [];
      const perThousand = scan.map((value) => (value / files) * 1000);
      return [
        `${repo.files.length} (${files} scanned)`,
        spread(scan),
        spread(perThousand),
        spread(walk),
        `${(stats(scan).median / stats(walk).median).toFixed(2)}×`,
        spread(withIgnore),
        `${(stats(withIgnore).median / stats(scan).median).toFixed(2)}×`,
        spread(git),
        `${(stats(scan).median / stats(git).median).toFixed(2)}×`,
      ];
    });
    const markdown = [
      `${ROUNDS} interleaved rounds per repository (\`scaledRepo\`: standard-library Python files), warm cache (one`,
      "untimed run first), in the bench process. The tracker's `check()` walks the tree (skipping the folders cgc",
      "ignores), stats every source file and compares each stamp (size, modification and status-change times,",
      'inode) with the previous look, so deletions, renames and restored old times show. "walk + stat only" is the',
      "same walk without the comparison (what the check of times against a moment cost); `git status --porcelain`",
      'is spawned on the same tree for comparison. "with a .gitignore" is the check on the same tree with a',
      `.gitignore of ${PYTHON_GITIGNORE.split("\n").length} lines (most of GitHub's Python template; none takes a file out), whose lines the`,
      "tracker matches against every path, as cgc's walk does.",
      "Median (min–max, n).",
      "",
      table(
        [
          "files",
          "`check()`",
          "per 1 000 files",
          "walk + stat only",
          "check / walk",
          "with a .gitignore",
          "with / without",
          "`git status --porcelain`",
          "check / git",
        ],
        rows,
      ),
      "",
      `- The check runs synchronously on pi's event loop at each prompt start and after each \`bash\` result:` +
        ` ${ms(stats(samples[`check:${repos.at(-1)?.name}`] ?? []).median)} on the largest repository.`,
    ].join("\n");
    return { title: "Change detection at the turn boundary", markdown };
  } finally {
    for (const repo of [...repos, ...ignoring.values()]) repo.cleanup();
  }
}
