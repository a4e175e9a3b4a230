// The engine's walk of the tree (engine/pi_cgc_engine/walk.py): cgc's discovery runs once per update and matched every
// directory and file against every ignore pattern each time. The engine remembers those answers per pattern list,
// and keeps the walk of the folders whose times did not change; this times the three ways side by side in one
// Python process (bench/engine-discovery.py) on the 1 000- and 5 000-file repositories, each walk after an edit.
import { execFile as execFileCallback } from "node:child_process";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { cgcBinary, childEnv, makeCgcHome } from "../test/helpers/cgc-env.ts";
import { type FixtureRepo, scaledRepo } from "../test/helpers/repos.ts";
import { type BenchOptions, type BenchReport, log, ratio, spread, table } from "./harness.ts";

const execFile = promisify(execFileCallback);
const ROUNDS = 10;
const SIZES = [1_000, 5_000];
const SCRIPT = join(dirname(fileURLToPath(import.meta.url)), "engine-discovery.py");

export async function run(options: BenchOptions): Promise<BenchReport> {
  const home = makeCgcHome();
  const rows: string[][] = [];
  try {
    for (const size of options.sizes ?? SIZES) {
      let repo: FixtureRepo | undefined;
      try {
        log(`engine discovery: a ${size}-file repository, ${ROUNDS} alternated rounds`);
        repo = scaledRepo(size);
        const { stderr } = await execFile(join(dirname(cgcBinary()), "python"), [SCRIPT, repo.path, String(ROUNDS)], {
          cwd: repo.path,
          env: childEnv(home.env),
          maxBuffer: 64 * 1024 * 1024,
        });
        const line = stderr.trim().split("\n").at(-1) ?? "";
        const measured = JSON.parse(line) as {
          files: number;
          original: number[];
          remembering: number[];
          kept: number[];
        };
        rows.push([
          `${size} (${measured.files} found)`,
          spread(measured.original),
          spread(measured.remembering),
          spread(measured.kept),
          ratio(measured.original, measured.remembering),
          ratio(measured.remembering, measured.kept),
        ]);
      } finally {
        repo?.cleanup();
      }
    }
  } finally {
    home.cleanup();
  }
  const markdown = [
    `${ROUNDS} rounds per repository (\`scaledRepo\`), the three ways in rotating order in one Python process (cgc`,
    "0.6.13's `discover_files_to_index`, as `Tree.discover` calls it), after one untimed round of each. Before each",
    "timed walk the tree changes as an edit changes it (in turn: a file's content, a new file in its folder, that",
    "file deleted), and each walk must find what a whole walk then finds. *cgc's matcher*: a whole walk with a new",
    "matcher, every directory and file matched against every pattern (the defaults, `.gitignore`, `.cgcignore`);",
    "*remembered*: a whole walk with the engine's answers kept per pattern list (a match is a function of the",
    "patterns and the path's text); *kept*: the kept walk (cgc's discovery handed only the folders whose times",
    'changed since the last walk, the other folders\' files kept; ADR 0011, "The walk"). An update walks once.',
    "Median (min–max, n).",
    "",
    table(["files", "cgc's matcher", "remembered", "kept walk", "matcher ÷ remembered", "remembered ÷ kept"], rows),
  ].join("\n");
  return { title: "The engine's walk of the tree", markdown };
}
