// What an index will cost, said before the user agrees to it and shown while it runs (issue 13): the files cgc
// will read, counted by cgc's own discovery and ignore rules (engine/discover.py, run by cgc's Python, writes
// nothing), times a per-file rate measured on each backend with cgc 0.6.13 on this project's machines
// (bench/RESULTS.md, "cgc index cost by backend"). An estimate: it says so, and rounds.
import { execFile } from "node:child_process";
import { dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { formatElapsed } from "../state/elapsed.ts";

export const DISCOVER_SCRIPT = resolve(dirname(fileURLToPath(import.meta.url)), "../../engine/discover.py");

/** Start-up (interpreter, imports, opening the database) and seconds per file, by the backend cgc reports. */
export const INDEX_RATES: Readonly<Record<string, { startMs: number; perFileMs: number }>> = {
  kuzudb: { startMs: 4_000, perFileMs: 2_000 },
  falkordb: { startMs: 4_000, perFileMs: 500 },
  "falkordb-remote": { startMs: 3_000, perFileMs: 200 },
  neo4j: { startMs: 4_000, perFileMs: 1_500 },
};

export interface IndexCost {
  files: number;
  /** The backend whose rate was used, or undefined when none was measured for it (KùzuDB's rate then). */
  backend: string | undefined;
  estimateMs: number;
}

export function estimateIndex(files: number, backend: string | undefined): IndexCost {
  const measured = backend !== undefined && backend in INDEX_RATES;
  const rate = INDEX_RATES[measured ? (backend as string) : "kuzudb"] as { startMs: number; perFileMs: number };
  return { files, backend: measured ? backend : undefined, estimateMs: rate.startMs + rate.perFileMs * files };
}

/** "about 1m05s" — estimates are rounded to what a person would say. */
export function roughly(ms: number): string {
  const step = ms < 60_000 ? 5_000 : ms < 600_000 ? 30_000 : 300_000;
  return `about ${formatElapsed(Math.max(step, Math.round(ms / step) * step))}`;
}

/** One or two sentences for a confirmation. */
export function describeIndexCost(cost: IndexCost): string {
  const rate = cost.backend ? `on ${cost.backend}` : "on this backend (its rate not measured: KùzuDB's used)";
  let text = `cgc will read ${cost.files} file(s): ${roughly(cost.estimateMs)} ${rate}, at the rates pi-cgc measured (machines differ).`;
  if (cost.backend === "kuzudb" && cost.estimateMs > 5 * 60_000) {
    const server = estimateIndex(cost.files, "falkordb-remote").estimateMs;
    text +=
      ` A FalkorDB server indexes about ten times faster (${roughly(server)} here): cgc uses one when` +
      " DEFAULT_DATABASE=falkordb-remote and FALKORDB_HOST name it.";
  }
  return text;
}

/** Counts the files cgc would index under `root`; undefined (and why) when the count cannot be had in time. */
export function countIndexFiles(
  python: string,
  root: string,
  env: NodeJS.ProcessEnv,
  budgetMs = 15_000,
): Promise<{ files: number } | { error: string }> {
  return new Promise((settle) => {
    execFile(
      python,
      [DISCOVER_SCRIPT, root],
      { cwd: root, env, timeout: budgetMs, killSignal: "SIGKILL", maxBuffer: 1 << 20 },
      (error, stdout) => {
        const line = stdout.trim().split("\n").at(-1) ?? "";
        try {
          const parsed = JSON.parse(line) as { files?: unknown; error?: unknown };
          if (typeof parsed.files === "number") return settle({ files: parsed.files });
          return settle({ error: String(parsed.error ?? error?.message ?? "no count") });
        } catch {
          return settle({ error: error?.killed ? `no count within ${budgetMs} ms` : (error?.message ?? "no count") });
        }
      },
    );
  });
}
