// Issue 14: what pi-cgc adds to pi's own start-up. pi's CLI in print mode answers one prompt with a scripted
// model (test/fixtures/pi/faux-provider.ts) and exits; five variants alternate in each round, on a tiny
// indexed repository: pi alone, pi with pi-cgc's modules loaded but nothing registered
// (bench/import-only-extension.ts: module loading), pi with pi-cgc, pi with pi-cgc with cgc missing
// (no probe spawn: what the session's cgc calls and their teardown add), and pi with pi-cgc whose
// session_shutdown handlers are timed (bench/shutdown-timed-extension.ts: how long pi waits at exit).
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { cgcBinary, childEnv, EXTENSION_ENTRY, makeCgcHome, PROJECT_ROOT } from "../test/helpers/cgc-env.ts";
import { tinyRepo } from "../test/helpers/repos.ts";
import {
  type BenchOptions,
  type BenchReport,
  cgc,
  interleave,
  log,
  spread,
  stats,
  table,
  timeSpawn,
} from "./harness.ts";
import { SHUTDOWN_LINE } from "./shutdown-timed-extension.ts";

const ROUNDS = 16;
const CLI = join(PROJECT_ROOT, "node_modules", "@mariozechner", "pi-coding-agent", "dist", "cli.js");
const FAUX = join(PROJECT_ROOT, "test", "fixtures", "pi", "faux-provider.ts");
const EXTENSION = EXTENSION_ENTRY;
const IMPORT_ONLY = join(PROJECT_ROOT, "bench", "import-only-extension.ts");
const SHUTDOWN_TIMED = join(PROJECT_ROOT, "bench", "shutdown-timed-extension.ts");

export async function run(options: BenchOptions): Promise<BenchReport> {
  const home = makeCgcHome();
  const repo = tinyRepo();
  const scratch = mkdtempSync(join(tmpdir(), "pi-cgc-bench-startup-"));
  try {
    await cgc(["index", repo.path], repo.path, home.env);
    const script = join(scratch, "script.json");
    writeFileSync(script, JSON.stringify([{ report: true }]));
    const env = (cgcPath: string) =>
      childEnv({
        ...home.env,
        PI_CODING_AGENT_DIR: join(scratch, "agent"),
        PI_OFFLINE: "1",
        PI_CGC_FAUX_SCRIPT: script,
        CGC_EXECUTABLE: cgcPath,
      });
    const pi =
      (extensions: string[], cgcPath = cgcBinary(), onStderr?: (stderr: string) => void) =>
      async () => {
        const args = [CLI, "-p", "hello", "--no-session", "--no-extensions", "-e", FAUX];
        for (const extension of extensions) args.push("-e", extension);
        args.push("--provider", "faux", "--model", "faux-1");
        const result = await timeSpawn(process.execPath, args, { cwd: repo.path, env: env(cgcPath) });
        if (result.code !== 0 || !result.stdout.includes("systemPrompt")) {
          throw new Error(`pi ${extensions.join(" ")} failed (${result.code}): ${result.stderr}${result.stdout}`);
        }
        onStderr?.(result.stderr);
        return result.ms;
      };
    /** Per timed run: the sum of pi-cgc's session_shutdown handlers, which pi waits for one after another. */
    const exitWaits: number[] = [];
    const sumShutdown = (stderr: string) => {
      const handlers = stderr
        .split("\n")
        .filter((line) => line.startsWith(SHUTDOWN_LINE))
        .map((line) => Number(line.slice(SHUTDOWN_LINE.length)));
      if (handlers.length === 0) throw new Error(`no session_shutdown timing on stderr: ${stderr}`);
      exitWaits.push(handlers.reduce((sum, ms) => sum + ms, 0));
    };
    const rounds = options.quick ? 3 : ROUNDS;
    log(`startup overhead: ${rounds} rounds of five pi runs`);
    const loadBefore = loadavg();
    const samples = await interleave(
      {
        "pi alone": pi([]),
        "pi + pi-cgc's modules, nothing registered": pi([IMPORT_ONLY]),
        "pi + pi-cgc, cgc missing (no spawn)": pi([EXTENSION], join(scratch, "no-such-cgc")),
        "pi + pi-cgc": pi([EXTENSION]),
        "pi + pi-cgc, its session_shutdown timed": pi([SHUTDOWN_TIMED], cgcBinary(), sumShutdown),
      },
      rounds,
    );
    const loadAfter = loadavg();
    const alone = samples["pi alone"];
    // Two decimals: the target is within 5 % of pi alone.
    // Each run against pi alone in the same round (the two ran minutes apart at most): a load that drifts
    // over the rounds moves both.
    const paired = (values: number[]) => stats(values.map((value, round) => value / (alone[round] as number))).median;
    const rows = Object.entries(samples).map(([name, values]) => [
      name,
      spread(values),
      `${(stats(values).median / stats(alone).median).toFixed(3)}×`,
      `${paired(values).toFixed(3)}×`,
    ]);
    const median = (name: keyof typeof samples) => stats(samples[name]).median;
    const loading = median("pi + pi-cgc's modules, nothing registered") - median("pi alone");
    const session = median("pi + pi-cgc, cgc missing (no spawn)") - median("pi + pi-cgc's modules, nothing registered");
    const spawns = median("pi + pi-cgc") - median("pi + pi-cgc, cgc missing (no spawn)");
    const load = (values: number[]) => values.map((value) => value.toFixed(1)).join(" ");
    const markdown = [
      `${rounds} rounds, the five runs alternated in rotating order: \`pi -p hello\` (print mode, one prompt, the`,
      "scripted faux model, `--no-extensions`) on the tiny fixture repository, indexed; wall time from spawn to",
      `exit. Median (min–max, n). Load average (1, 5, 15 min) before the runs ${load(loadBefore)}, after ${load(loadAfter)}.`,
      "",
      table(["run", "wall time", "vs pi alone (ratio of medians)", "vs pi alone (median of per-round ratios)"], rows),
      "",
      `Where the difference goes (differences of medians): loading pi-cgc's modules ${Math.round(loading)} ms;`,
      `its session without cgc (config, store, the failed probe, shutdown) ${Math.round(session)} ms; the probe's`,
      `cgc calls and their teardown at exit ${Math.round(spawns)} ms, of which pi waits at exit for pi-cgc's`,
      `session_shutdown (the probe's cgc children stopped: SIGINT, then their end) ${spread(exitWaits)} (timed run).`,
    ].join("\n");
    return { title: "pi start-up with and without pi-cgc", markdown };
  } finally {
    home.cleanup();
    repo.cleanup();
    rmSync(scratch, { recursive: true, force: true });
  }
}
