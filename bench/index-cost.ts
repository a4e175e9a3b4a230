// Issue 13, point 4: the estimate the "Build a code graph?" and --force confirmations state (src/cgc/index-cost.ts)
// against the measured time of a real `cgc index`, on KùzuDB and FalkorDB Lite (and the server backends), at
// three repository sizes. The count is the product's own (engine/discover.py by cgc's interpreter); the time is
// one cold `cgc index` into a fresh database per size and backend, backends alternated within a size.
import { dirname, join } from "node:path";
import { countIndexFiles, estimateIndex } from "../src/cgc/index-cost.ts";
import { PINNED_ENV } from "../src/cgc/runner.ts";
import { type BackendName, startBackend } from "../test/helpers/backends.ts";
import { cgcExec } from "../test/helpers/cgc-env.ts";
import { scaledRepo } from "../test/helpers/repos.ts";
import { type BenchOptions, type BenchReport, log, table } from "./harness.ts";

const SIZES = [10, 30, 100];
const BACKENDS: BackendName[] = ["kuzudb", "falkordb", "falkordb-remote", "neo4j"];

export async function run(options: BenchOptions): Promise<BenchReport> {
  const sizes = options.sizes ?? (options.quick ? [10, 30] : SIZES);
  const backends = (options.variants as BackendName[] | undefined) ?? BACKENDS;
  const rows: string[][] = [];
  const ratios: number[] = [];
  for (const size of sizes) {
    for (const name of backends) {
      const backend = await startBackend(name);
      const repo = scaledRepo(size);
      try {
        const counted = await countIndexFiles(join(dirname(backend.cgc), "python"), repo.path, backend.env, 60_000);
        if (!("files" in counted)) throw new Error(`no count: ${counted.error}`);
        const estimate = estimateIndex(counted, name).estimateMs;
        log(
          `index-cost: ${name}, ${size} files (counted ${counted.files}, estimated ${Math.round(estimate / 1000)} s)`,
        );
        const started = performance.now();
        const indexed = await cgcExec(["index", repo.path], {
          cwd: repo.path,
          // As pi-cgc runs cgc (src/cgc/runner.ts PINNED_ENV): the standard library's own folders at the top of
          // these trees would otherwise take FalkorDB Lite's worker down and cgc to KùzuDB.
          env: { ...backend.env, PYTHONSAFEPATH: PINNED_ENV.PYTHONSAFEPATH },
          cgc: backend.cgc,
          timeoutMs: 3_600_000,
        });
        const measured = performance.now() - started;
        if (indexed.code !== 0) throw new Error(`cgc index failed on ${name}: ${indexed.stderr.slice(-500)}`);
        const scanned = /Total scanned files\s*\|\s*(\d+)/.exec(indexed.stdout)?.[1] ?? "?";
        const ratio = estimate / measured;
        ratios.push(ratio);
        rows.push([
          name,
          String(size),
          `${counted.files} / ${scanned} (${Math.round(counted.bytes / 1024)} KiB)`,
          `${(estimate / 1000).toFixed(0)} s`,
          `${(measured / 1000).toFixed(1)} s`,
          `${ratio.toFixed(2)}×`,
        ]);
      } finally {
        await backend.stop();
        repo.cleanup();
      }
    }
  }
  const within = ratios.filter((ratio) => ratio >= 0.5 && ratio <= 2).length;
  const markdown = [
    "`scaledRepo(n)` (standard-library files), one cold `cgc index` into a fresh database per cell. *counted* is",
    "what the confirmation says cgc will read (engine/discover.py: cgc's own discovery and ignore rules), against",
    "cgc's own *Total scanned files* (and the files' size); *estimate* is src/cgc/index-cost.ts's start-up plus per-KiB rate for that backend.",
    "",
    table(["backend", "files", "counted / cgc scanned", "estimate", "measured", "estimate ÷ measured"], rows),
    "",
    `- ${within} of ${ratios.length} estimates within 2× of the measured time (the target of issue 13).`,
  ].join("\n");
  return { title: "cgc index cost by backend: the confirmation's estimate against the real index", markdown };
}
