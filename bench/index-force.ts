// `/cgc index --force` on an unchanged tree against the cold index of the same tree, in one run on one backend:
// the cold index (empty graph, empty parse store), then the rebuild with the parse store the cold index filled,
// then the same rebuild without a parse store (every file parsed again). pi-cgc's own index (the engine script) with
// the arguments pi-cgc gives it. What the parse store saves is the parse. A rebuild of a graph that holds the root
// compares the graph with the full index of the tree and writes what differs (nothing, here), where it deleted the
// root's old graph and wrote it all again; the line it ends with says which it did.
import { spawn } from "node:child_process";
import { cpSync, mkdtempSync, readdirSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, dirname, join } from "node:path";
import { ENGINE_SCRIPT } from "../src/cgc/engine-script.ts";
import { PINNED_ENV } from "../src/cgc/runner.ts";
import { type BackendName, startBackend } from "../test/helpers/backends.ts";
import { childEnv } from "../test/helpers/cgc-env.ts";
import { scaledRepo } from "../test/helpers/repos.ts";
import { type BenchOptions, type BenchReport, log, table } from "./harness.ts";

const SIZES = [1_000];
const BACKENDS: BackendName[] = ["kuzudb", "falkordb"];

interface Timed {
  ms: number;
  stdout: string;
  /** From the "deleting the old graph" line to the next: the rebuild's delete of the root's old graph. */
  deleteMs?: number;
}

/** pi-cgc's index, its progress lines timed as they come. */
function timed(python: string, args: string[], cwd: string, env: NodeJS.ProcessEnv): Promise<Timed> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const child = spawn(python, [ENGINE_SCRIPT, ...args], { cwd, env, stdio: ["ignore", "pipe", "pipe"] });
    const lines: { at: number; text: string }[] = [];
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk: Buffer) => {
      stdout += chunk.toString("utf8");
      for (const text of chunk.toString("utf8").split("\n")) if (text) lines.push({ at: performance.now(), text });
    });
    child.stderr.on("data", (chunk: Buffer) => {
      stderr = (stderr + chunk.toString("utf8")).slice(-4000);
    });
    child.once("error", reject);
    child.once("close", (code) => {
      const ms = performance.now() - started;
      if (code !== 0) return reject(new Error(`pi-cgc's index ${args.join(" ")} failed: ${stderr}`));
      const at = lines.findIndex((line) => line.text.includes("deleting the old graph"));
      const after = at >= 0 ? lines[at + 1] : undefined;
      const deleting = at >= 0 ? lines[at] : undefined;
      resolve({ ms, stdout, deleteMs: deleting && after ? after.at - deleting.at : undefined });
    });
  });
}

/** The parse store's entries and their bytes. */
function storeSize(store: string): { entries: number; bytes: number } {
  let entries = 0;
  let bytes = 0;
  for (const dir of readdirSync(store, { withFileTypes: true })) {
    if (!dir.isDirectory()) continue;
    for (const name of readdirSync(join(store, dir.name))) {
      if (!name.endsWith(".parse")) continue;
      entries++;
      bytes += statSync(join(store, dir.name, name)).size;
    }
  }
  return { entries, bytes };
}

/** "read and resolved in 3.1 s, 1000 parses from the parse store, 0 not in it" */
const readPart = (stdout: string) => /\(read and resolved in ([\d.]+) s/.exec(stdout)?.[1] ?? "?";
const fromStore = (stdout: string) => /(\d+) parses? from the parse store, (\d+) not in it/.exec(stdout);
const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`;
/** How the rebuild wrote the graph: "adoption: nothing differed from the graph", "bulk", … */
const how = (run: Timed) => /; written with ([^)]+)\)/.exec(run.stdout)?.[1] ?? "?";
const written = (run: Timed) =>
  run.deleteMs === undefined ? `written with ${how(run)}` : `delete ${seconds(run.deleteMs)}, written with ${how(run)}`;

export async function run(options: BenchOptions): Promise<BenchReport> {
  const sizes = options.sizes ?? (options.quick ? [100] : SIZES);
  const backends = (options.variants as BackendName[] | undefined) ?? BACKENDS;
  const rows: string[][] = [];
  for (const size of sizes) {
    for (const name of backends) {
      const repo = scaledRepo(size);
      const backend = await startBackend(name);
      const work = mkdtempSync(join(tmpdir(), "pi-cgc-index-force-"));
      const root = join(work, basename(repo.path));
      cpSync(repo.path, root, { recursive: true });
      try {
        const python = join(dirname(backend.cgc), "python");
        const env = childEnv({ ...backend.env, PYTHONSAFEPATH: PINNED_ENV.PYTHONSAFEPATH });
        const cache = join(work, "cache");
        const store = join(work, "parse-store");
        const withStore = ["--cache-dir", cache, "--parse-store", store, "--parse-store-mb", "1024"];
        log(`index-force: ${name}, ${size}: the cold index`);
        const cold = await timed(python, [...withStore, "index", root], root, env);
        const kept = storeSize(store);
        log(`index-force: ${name}, ${size}: --force with the parse store`);
        const stored = await timed(python, [...withStore, "index", "--force", root], root, env);
        log(`index-force: ${name}, ${size}: --force without a parse store`);
        const plain = await timed(python, ["--cache-dir", cache, "index", "--force", root], root, env);
        const hits = fromStore(stored.stdout);
        rows.push([
          name,
          String(size),
          `${seconds(cold.ms)} (read ${readPart(cold.stdout)} s)`,
          `${seconds(stored.ms)} (read ${readPart(stored.stdout)} s, ${written(stored)}) · ${(stored.ms / cold.ms).toFixed(2)}×`,
          `${seconds(plain.ms)} (read ${readPart(plain.stdout)} s, ${written(plain)}) · ${(plain.ms / cold.ms).toFixed(2)}×`,
          hits ? `${hits[1]} of ${Number(hits[1]) + Number(hits[2])}` : "?",
          `${kept.entries} · ${(kept.bytes / 2 ** 20).toFixed(1)} MiB`,
        ]);
        log(`index-force: ${rows.at(-1)?.join(" | ")}`);
      } finally {
        await backend.stop();
        rmSync(work, { recursive: true, force: true });
        repo.cleanup();
      }
    }
  }
  const markdown = [
    "pi-cgc's own index (`engine/pi-cgc-engine.py index`) of `scaledRepo(n)` (standard-library files), one run per",
    "cell, in this order: the cold index (an empty graph and an empty parse store), `--force` on the unchanged tree",
    "with the parse store the cold index filled, and `--force` without a parse store. Time (and the part of it",
    "spent reading the tree: discovery and parse, or the store, and the resolution; for `--force`, how it wrote the",
    "graph: compared with the tree and only what differs written (adoption), or the old graph deleted with cgc's",
    "writer and written whole) · the ratio to the cold index.",
    "*from the store*: files whose parse came from the store. *store*: its entries and size after the cold index.",
    "",
    table(
      ["backend", "files", "cold index", "--force, parse store", "--force, no parse store", "from the store", "store"],
      rows,
    ),
  ].join("\n");
  const chosen = options.sizes || options.variants ? `: ${sizes.join(", ")} files on ${backends.join(", ")}` : "";
  return { title: `\`/cgc index --force\` on an unchanged tree, against the cold index${chosen}`, markdown };
}
