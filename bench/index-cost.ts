// The cost of a full index, pi-cgc's own against cgc's own, on the same tree in the same run, on every backend:
// files/s, the peak resident memory of the whole index (its process and its parse workers), the engine's resident
// memory once it has started from the cache the index left, that warm start's time, and the confirmation's
// estimate (src/cgc/index-cost.ts) against pi-cgc's measured time. Sizes are `scaledRepo(n)` (standard-library
// files), plus one real multi-language tree (`--sizes 0`: Python, JavaScript, TypeScript, Go). cgc's own index
// runs only up to `OWN_MAX` files on a backend (KùzuDB's takes about a second a file): above, its cell says so.
import { spawn } from "node:child_process";
import { cpSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, dirname, join } from "node:path";
import { ENGINE_SCRIPT } from "../src/cgc/engine-script.ts";
import { countIndexFiles, estimateIndex } from "../src/cgc/index-cost.ts";
import { PINNED_ENV } from "../src/cgc/runner.ts";
import { type BackendName, startBackend, type TestBackend } from "../test/helpers/backends.ts";
import { childEnv, PROJECT_ROOT } from "../test/helpers/cgc-env.ts";
import { type FixtureRepo, scaledRepo, stdlibDir } from "../test/helpers/repos.ts";
import { type BenchOptions, type BenchReport, log, table } from "./harness.ts";

const SIZES = [100, 1_000, 5_000];
const BACKENDS: BackendName[] = ["kuzudb", "falkordb", "falkordb-remote", "neo4j"];
/** The largest tree cgc's own index is timed on, by backend (beyond it, an hour or more on this machine). */
const OWN_MAX: Record<string, number> = { kuzudb: 300, falkordb: 5_000, "falkordb-remote": 5_000, neo4j: 1_000 };
const HOUR_MS = 3_600_000;

interface Measured {
  ms: number;
  code: number | null;
  peakRssMiB: number;
  stdout: string;
  stderr: string;
}

/** Resident memory (MiB, proportional) of every process in the group `pgid`: the index and its forked parse workers. */
function groupRssMiB(pgid: number): number {
  let kib = 0;
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      // Fields after the command's closing parenthesis: state, ppid, pgrp, …
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      if (Number(fields[2]) !== pgid) continue;
      // Proportional set size: a page the forked workers share with their parent counts once, split between them.
      const pss = /^Pss:\s+(\d+) kB/m.exec(readFileSync(`/proc/${entry}/smaps_rollup`, "utf8"));
      if (pss) kib += Number(pss[1]);
    } catch {
      // a process that ended between the listing and the read
    }
  }
  return kib / 1024;
}

/** One child in its own process group, timed to its exit, its group's resident memory sampled every 100 ms. */
function measure(command: string, args: string[], cwd: string, env: NodeJS.ProcessEnv): Promise<Measured> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const child = spawn(command, args, { cwd, env, detached: true, stdio: ["ignore", "pipe", "pipe"] });
    let peak = 0;
    const sampler = setInterval(() => {
      if (child.pid !== undefined) peak = Math.max(peak, groupRssMiB(child.pid));
    }, 100);
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout.on("data", (chunk: Buffer) => out.push(chunk));
    child.stderr.on("data", (chunk: Buffer) => err.push(chunk));
    child.once("error", reject);
    child.once("close", (code) => {
      clearInterval(sampler);
      resolve({
        ms: performance.now() - started,
        code,
        peakRssMiB: peak,
        stdout: Buffer.concat(out).toString("utf8"),
        stderr: Buffer.concat(err).toString("utf8").slice(-3_000),
      });
    });
  });
}

/** The engine started from the cache the index left: its time to ready, its own start figure, and its RSS then. */
function warmStart(python: string, root: string, cacheDir: string, env: NodeJS.ProcessEnv) {
  return new Promise<{ ms: number; trusted: boolean; rssMiB: number }>((resolve, reject) => {
    const started = performance.now();
    const child = spawn(python, [ENGINE_SCRIPT, "serve", "--root", root, "--cache-dir", cacheDir], {
      cwd: root,
      env,
      stdio: ["pipe", "pipe", "ignore"],
    });
    let buffer = "";
    child.stdout.on("data", (chunk: Buffer) => {
      buffer += chunk.toString("utf8");
      const line = buffer.split("\n").find((text) => text.includes('"event"'));
      if (!line) return;
      const ready = JSON.parse(line) as { event: string; trusted?: boolean; reason?: string };
      const ms = performance.now() - started;
      const rss = /^VmRSS:\s+(\d+) kB/m.exec(readFileSync(`/proc/${child.pid}/status`, "utf8"));
      child.stdin.end(`${JSON.stringify({ id: 1, op: "shutdown" })}\n`);
      if (ready.event !== "ready") reject(new Error(`the engine did not start: ${ready.reason}`));
      else resolve({ ms, trusted: ready.trusted === true, rssMiB: rss ? Number(rss[1]) / 1024 : Number.NaN });
    });
    child.once("error", reject);
  });
}

/** Python, JavaScript, TypeScript and Go sources found on this machine (what a clean clone's set-up installs). */
function mixedRepo(): FixtureRepo {
  const root = join(mkdtempSync(join(tmpdir(), "pi-cgc-mixed-")), "mixed");
  const sources: [string, string][] = [
    [join(stdlibDir(), "email"), "py/email"],
    [join(stdlibDir(), "json"), "py/json"],
    [join(PROJECT_ROOT, "node_modules", "basic-ftp", "dist"), "js/basic-ftp"],
    [join(PROJECT_ROOT, "node_modules", "@smithy", "signature-v4", "dist-types"), "ts/signature-v4"],
    [join(goRoot(), "src", "container"), "go/container"],
    [join(goRoot(), "src", "errors"), "go/errors"],
  ];
  for (const [from, to] of sources)
    if (existsSync(from))
      cpSync(from, join(root, to), { recursive: true, filter: (path) => !path.includes("__pycache__") });
  return { path: root, cleanup: () => rmSync(dirname(root), { recursive: true, force: true }) } as FixtureRepo;
}

function goRoot(): string {
  for (const candidate of ["/usr/local/go", "/usr/lib/go"]) if (existsSync(join(candidate, "src"))) return candidate;
  return "/usr/local/go";
}

function copyOf(repo: FixtureRepo): string {
  const copy = join(mkdtempSync(join(tmpdir(), "pi-cgc-index-copy-")), basename(repo.path));
  cpSync(repo.path, copy, { recursive: true });
  return copy;
}

function kib(root: string): number {
  let bytes = 0;
  const walk = (dir: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else bytes += statSync(path).size;
    }
  };
  walk(root);
  return Math.round(bytes / 1024);
}

const rate = (files: number, ms: number) => (files / (ms / 1000)).toFixed(1);
const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`;

export async function run(options: BenchOptions): Promise<BenchReport> {
  // `--sizes 0` is the multi-language tree.
  const sizes: (number | "mixed")[] = (options.sizes ?? (options.quick ? [100] : [...SIZES, 0])).map((size) =>
    size === 0 ? "mixed" : size,
  );
  const backends = (options.variants as BackendName[] | undefined) ?? BACKENDS;
  const rows: string[][] = [];
  const ratios: number[] = [];
  const failures: string[] = [];
  for (const size of sizes) {
    for (const name of backends) {
      const repo = size === "mixed" ? mixedRepo() : scaledRepo(size);
      const own: TestBackend = await startBackend(name);
      const mine: TestBackend = await startBackend(name);
      const copy = copyOf(repo);
      const cacheDir = mkdtempSync(join(tmpdir(), "pi-cgc-index-cache-"));
      try {
        const python = join(dirname(mine.cgc), "python");
        // As pi-cgc runs cgc (src/cgc/runner.ts PINNED_ENV).
        const envOf = (backend: TestBackend) => childEnv({ ...backend.env, PYTHONSAFEPATH: PINNED_ENV.PYTHONSAFEPATH });
        const counted = await countIndexFiles(python, repo.path, envOf(mine), 120_000);
        if (!("files" in counted)) throw new Error(`no count: ${counted.error}`);
        const files = counted.files;
        const estimate = estimateIndex(counted, name, "pi-cgc").estimateMs;
        log(`index-cost: ${name}, ${size} (${files} files): pi-cgc's index`);
        const ours = await measure(python, [ENGINE_SCRIPT, "--cache-dir", cacheDir, "index", copy], copy, envOf(mine));
        if (ours.code !== 0) {
          // A failed cell is a finding: said in its row (the last line of the error), and the run goes on.
          const last = ours.stderr.trim().split("\n").at(-1)?.slice(0, 200) ?? "";
          log(`index-cost: pi-cgc's index failed on ${name}, ${size}: ${ours.stderr}`);
          failures.push(`${name}, ${size === "mixed" ? "mixed" : size}: ${last}`);
          rows.push([
            name,
            size === "mixed" ? `mixed (${files})` : String(files),
            `${kib(repo.path)} KiB`,
            "–",
            `failed (exit ${ours.code})`,
            "–",
            "–",
            `${seconds(estimate)}`,
          ]);
          continue;
        }
        const how = /written with (.+?)\)/.exec(ours.stdout)?.[1] ?? "?";
        const warm = await warmStart(python, copy, cacheDir, envOf(mine));
        let theirs: Measured | undefined;
        if (files <= (OWN_MAX[name] ?? 0)) {
          log(`index-cost: ${name}, ${size} (${files} files): cgc's own index`);
          theirs = await measure(own.cgc, ["index", repo.path], repo.path, envOf(own));
          if (theirs.code !== 0) throw new Error(`cgc's own index failed on ${name}: ${theirs.stderr}`);
          if (theirs.ms > HOUR_MS) log(`index-cost: cgc's own index took over an hour on ${name}`);
        }
        ratios.push(estimate / ours.ms);
        rows.push([
          name,
          size === "mixed" ? `mixed (${files})` : String(files),
          `${kib(repo.path)} KiB`,
          theirs
            ? `${seconds(theirs.ms)} · ${rate(files, theirs.ms)}/s · ${Math.round(theirs.peakRssMiB)} MiB`
            : "not run",
          `${seconds(ours.ms)} · ${rate(files, ours.ms)}/s · ${Math.round(ours.peakRssMiB)} MiB (${how})`,
          theirs ? `${(theirs.ms / ours.ms).toFixed(1)}×` : "–",
          `${seconds(warm.ms)}${warm.trusted ? "" : " (not trusted)"} · ${Math.round(warm.rssMiB)} MiB`,
          `${seconds(estimate)} (${(estimate / ours.ms).toFixed(2)}×)`,
        ]);
        log(`index-cost: ${rows.at(-1)?.join(" | ")}`);
      } finally {
        await own.stop();
        await mine.stop();
        rmSync(dirname(copy), { recursive: true, force: true });
        rmSync(cacheDir, { recursive: true, force: true });
        repo.cleanup();
      }
    }
  }
  const within = ratios.filter((value) => value >= 0.5 && value <= 2).length;
  const markdown = [
    "One cold index into a fresh database per cell, cgc's own (`cgc index`) and pi-cgc's (`engine/pi-cgc-engine.py",
    "index`) on identical copies, each on a backend of its own. Time · files/s · peak resident memory of the index's",
    "process group (its parse workers included). *warm start*: the engine (`serve`) started from the cache pi-cgc's",
    "index left, its time to ready and its resident memory then. *estimate*: the confirmation's (src/cgc/index-cost.ts)",
    "against pi-cgc's measured time. `mixed`: Python (email, json), JavaScript (basic-ftp), TypeScript",
    "(@smithy/signature-v4 types) and Go (container, errors).",
    "",
    table(
      ["backend", "files", "size", "cgc's own index", "pi-cgc's index", "speed-up", "warm start", "estimate"],
      rows,
    ),
    "",
    `- ${within} of ${ratios.length} estimates within 2× of pi-cgc's measured time.`,
    ...failures.map((failure) => `- pi-cgc's index failed: ${failure}`),
  ].join("\n");
  // A run of chosen sizes or backends is a section of its own (bench/run.ts): its title says which.
  const chosen =
    options.sizes || options.variants
      ? `: ${sizes.map((size) => (size === "mixed" ? "the mixed tree" : `${size.toLocaleString("en").replace(/,/g, " ")} files`)).join(", ")} on ${backends.join(", ")}`
      : ", by backend and size";
  return { title: `Full index: pi-cgc's own against cgc's own${chosen}`, markdown };
}
