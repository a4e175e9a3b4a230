// What an index will cost, said before the user agrees to it and shown while it runs: the files cgc
// will read, counted by cgc's own discovery and ignore rules (engine/discover.py, run by cgc's Python, writes
// nothing), and their size, times a rate measured on each backend with cgc 0.6.13 on this project's machines
// (bench/RESULTS.md, "cgc index cost by backend"). An estimate: it says so, and rounds.
import { execFile } from "node:child_process";
import { formatElapsed } from "../state/elapsed.ts";
import { count } from "../state/words.ts";
import { engineFile } from "./engine-script.ts";

export const DISCOVER_SCRIPT = engineFile("discover.py");

/**
 * Start-up (interpreter, imports, opening the database) and ms per KiB of source, by the backend cgc reports.
 * The time grows with the bytes cgc parses, not the number of files (a KiB costs about the same at 10, 30 and
 * 100 files, a file anything from 0.3 to 1 s on KùzuDB). Machines differ by about 3× (a loaded Intel machine
 * against a quiet AMD one, both recorded in bench/RESULTS.md): each rate is the geometric middle of the two.
 */
export const INDEX_RATES: Readonly<Record<string, { startMs: number; perKiBMs: number }>> = {
  kuzudb: { startMs: 5_000, perKiBMs: 76 },
  falkordb: { startMs: 4_000, perKiBMs: 8 },
  "falkordb-remote": { startMs: 2_000, perKiBMs: 6 },
  neo4j: { startMs: 18_000, perKiBMs: 24 },
};

/**
 * The same for pi-cgc's own index (engine/pi_cgc_engine/indexer.py: cgc's parser on both cores, the graph written
 * in bulk), fitted to its times at 100 and 1 000 standard-library files on this project's 2-core machine, the
 * interpreter's start included (bench/RESULTS.md, "Full index"). Used whenever the index runs through the engine
 * (wholeIndexProgram); cgc's own rates above where cgc's own index runs.
 */
export const PI_CGC_INDEX_RATES: Readonly<Record<string, { startMs: number; perKiBMs: number }>> = {
  kuzudb: { startMs: 700, perKiBMs: 1.9 },
  falkordb: { startMs: 500, perKiBMs: 2.1 },
  "falkordb-remote": { startMs: 300, perKiBMs: 1.85 },
  neo4j: { startMs: 4_700, perKiBMs: 3.1 },
};

/** Whose index runs: pi-cgc's own (through the engine) or cgc's. */
export type Indexer = "pi-cgc" | "cgc";

/** What cgc's discovery found: its files and their total size. */
export interface IndexFiles {
  files: number;
  bytes: number;
}

export interface IndexCost extends IndexFiles {
  indexer: Indexer;
  /** The backend whose rate was used, or undefined when none was measured for it (KùzuDB's rate then). */
  backend: string | undefined;
  estimateMs: number;
}

export function estimateIndex(found: IndexFiles, backend: string | undefined, indexer: Indexer = "cgc"): IndexCost {
  const rates = indexer === "pi-cgc" ? PI_CGC_INDEX_RATES : INDEX_RATES;
  const measured = backend !== undefined && backend in rates;
  const rate = rates[measured ? (backend as string) : "kuzudb"] as { startMs: number; perKiBMs: number };
  const estimateMs = Math.round(rate.startMs + (rate.perKiBMs * found.bytes) / 1024);
  return { ...found, indexer, backend: measured ? backend : undefined, estimateMs };
}

/** "about 1m05s" — estimates are rounded to what a person would say. */
export function roughly(ms: number): string {
  const step = ms < 60_000 ? 5_000 : ms < 600_000 ? 30_000 : 300_000;
  return `about ${formatElapsed(Math.max(step, Math.round(ms / step) * step))}`;
}

/** One or two sentences for a confirmation. */
export function describeIndexCost(cost: IndexCost): string {
  const rate = cost.backend ? `on ${cost.backend}` : "on this backend (its rate not measured: KùzuDB's used)";
  const who = cost.indexer === "pi-cgc" ? "pi-cgc's index" : "cgc";
  let text = `${who} will read ${count(cost.files, "file")}, ${size(cost.bytes)}: ${roughly(cost.estimateMs)} ${rate}, at the rates pi-cgc measured (machines differ).`;
  if (cost.backend === "kuzudb" && cost.estimateMs > 5 * 60_000) {
    const server = estimateIndex(cost, "falkordb-remote", cost.indexer).estimateMs;
    text +=
      ` A FalkorDB server indexes about ten times faster (${roughly(server)} here): cgc uses one when` +
      " DEFAULT_DATABASE=falkordb-remote and FALKORDB_HOST name it.";
  }
  return text;
}

/** "48 KiB", "1.7 MiB". */
function size(bytes: number): string {
  return bytes < 1024 * 1024
    ? `${Math.max(1, Math.round(bytes / 1024))} KiB`
    : `${(bytes / 1024 / 1024).toFixed(1)} MiB`;
}

/** Counts the files cgc would index under `root`, and their size; why not, when that cannot be had in time. */
export function countIndexFiles(
  python: string,
  root: string,
  env: NodeJS.ProcessEnv,
  budgetMs = 15_000,
): Promise<IndexFiles | { error: string }> {
  return new Promise((settle) => {
    execFile(
      python,
      [DISCOVER_SCRIPT, root],
      { cwd: root, env, timeout: budgetMs, killSignal: "SIGKILL", maxBuffer: 1 << 20 },
      (error, stdout) => {
        const line = stdout.trim().split("\n").at(-1) ?? "";
        try {
          const parsed = JSON.parse(line) as { files?: unknown; bytes?: unknown; error?: unknown };
          if (typeof parsed.files === "number" && typeof parsed.bytes === "number")
            return settle({ files: parsed.files, bytes: parsed.bytes });
          return settle({ error: String(parsed.error ?? error?.message ?? "no count") });
        } catch {
          return settle({ error: error?.killed ? `no count within ${budgetMs} ms` : (error?.message ?? "no count") });
        }
      },
    );
  });
}
