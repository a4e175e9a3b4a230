// Issue 2, point 10: what one cgc spawn costs, against Python's own start-up. Every pi-cgc call is a
// spawn, so this is the floor under every probe, query and sync.
import { join } from "node:path";
import { cgcBinary, childEnv, makeCgcHome, PROJECT_ROOT } from "../test/helpers/cgc-env.ts";
import { tinyRepo } from "../test/helpers/repos.ts";
import {
  type BenchOptions,
  type BenchReport,
  cgc,
  interleave,
  log,
  queryRows,
  ratio,
  spread,
  stats,
  type TimedRun,
  table,
  timeSpawn,
} from "./harness.ts";

const ROUNDS = 10;
const TRIVIAL_QUERY = "MATCH (n) RETURN count(n) AS n";

export async function run(_options: BenchOptions): Promise<BenchReport> {
  const home = makeCgcHome();
  const repo = tinyRepo();
  try {
    await cgc(["index", repo.path], repo.path, home.env);
    const env = childEnv(home.env);
    const python = join(PROJECT_ROOT, ".venv", "bin", "python");
    const timed = (command: string, args: string[], check?: (run: TimedRun) => boolean) => async () => {
      const result = await timeSpawn(command, args, { cwd: repo.path, env });
      if (result.code !== 0 || (check && !check(result))) {
        throw new Error(`${command} ${args.join(" ")} failed (${result.code}): ${result.stderr}${result.stdout}`);
      }
      return result.ms;
    };
    log(`spawn cost: ${ROUNDS} interleaved rounds`);
    const samples = await interleave(
      {
        "python -c pass": timed(python, ["-c", "pass"]),
        "python -c 'import codegraphcontext'": timed(python, ["-c", "import codegraphcontext"]),
        "python -c 'import codegraphcontext.cli.main'": timed(python, ["-c", "import codegraphcontext.cli.main"]),
        "cgc --version": timed(cgcBinary(), ["--version"], (run) => /0\.6\.\d+/.test(run.stdout + run.stderr)),
        [`cgc query '${TRIVIAL_QUERY}'`]: timed(cgcBinary(), ["query", TRIVIAL_QUERY], (run) => {
          const n = queryRows(run.stdout)[0]?.n;
          return typeof n === "number" && n > 0;
        }),
      },
      ROUNDS,
    );
    const base = samples["python -c pass"];
    const rows = Object.entries(samples).map(([name, values]) => [`\`${name}\``, spread(values), ratio(values, base)]);
    const version = samples["cgc --version"];
    const query = samples[`cgc query '${TRIVIAL_QUERY}'`];
    const cliImport = samples["python -c 'import codegraphcontext.cli.main'"];
    const markdown = [
      `${ROUNDS} rounds, the five commands interleaved (rotating order), wall time from spawn to exit; the query runs`,
      "on the tiny fixture repository (6 files) indexed into an isolated CGC home. Median (min–max, n).",
      "",
      table(["command", "wall time", "vs `python -c pass`"], rows),
      "",
      `- A trivial query costs ${ratio(query, version)} a \`cgc --version\`; the database open adds` +
        ` ${Math.round(stats(query).median - stats(version).median)} ms to the CLI start.`,
      `- Importing cgc's CLI module (\`codegraphcontext.cli.main\`) alone takes ${Math.round(
        (stats(cliImport).median / stats(version).median) * 100,
      )}% of \`cgc --version\`: the cost of a spawn is the CLI's import graph (FastAPI, the visualiser,` +
        " the MCP server), not Python itself and not the top-level package.",
    ].join("\n");
    return { title: "Spawn cost", markdown };
  } finally {
    home.cleanup();
    repo.cleanup();
  }
}
