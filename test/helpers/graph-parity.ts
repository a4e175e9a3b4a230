// Does a graph equal what a full index of the same tree holds? The engine's canonical dump (every node and
// every edge of the repository's subgraph, one sorted line each, paths relative to the root) of the graph
// under test and of a fresh `cgc index` of a copy of the tree, compared line for line.
import { execFile as execFileCallback } from "node:child_process";
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, dirname, join } from "node:path";
import { promisify } from "node:util";
import { ENGINE_SCRIPT } from "../../src/cgc/engine-script.ts";
import type { BackendName } from "./backends.ts";
import { cgcBinary, cgcExec, cgcStart, childEnv, makeCgcHome, stopEscalating } from "./cgc-env.ts";

const execFile = promisify(execFileCallback);

/** A graph to read: the cgc executable (its Python runs the dump) and the environment that selects the graph. */
export interface GraphAccess {
  cgc: string;
  env: Record<string, string>;
  /** The backend, when it matters ("falkordb" is FalkorDB Lite). */
  name?: BackendName;
}

/** A dump that has not ended by then is stuck (below); no dump of these graphs takes more than seconds. */
const DUMP_TIMEOUT_MS = 180_000;

export interface ParityResult {
  /** Lines a full index has and the graph lacks. */
  missing: string[];
  /** Lines the graph has and a full index does not. */
  extra: string[];
  /** Both dumps, kept for whoever looks into a difference (undefined when the graphs agree). */
  keptIn?: string;
}

/** The canonical dump of the graph of `root` (engine/pi-cgc-engine.py dump, by that cgc's Python). */
export async function graphDump(root: string, graph: GraphAccess): Promise<string[]> {
  const out = join(mkdtempSync(join(tmpdir(), "pi-cgc-dump-")), "dump.txt");
  try {
    for (let attempt = 0; ; attempt++) {
      const result = await execFile(
        join(dirname(graph.cgc), "python"),
        [ENGINE_SCRIPT, "dump", "--root", root, "--out", out],
        { cwd: root, env: childEnv(graph.env), timeout: DUMP_TIMEOUT_MS, killSignal: "SIGKILL" },
      ).catch((error: { stderr?: string; killed?: boolean }) => ({
        stderr: error.killed ? `no answer in ${DUMP_TIMEOUT_MS / 1000} s` : (error.stderr ?? String(error)),
        stuck: error.killed === true,
        failed: true,
      }));
      if (!("failed" in result)) return readFileSync(out, "utf8").split("\n").filter(Boolean);
      // Retried while another process holds the embedded database (a session's lease letting go); not after a
      // dump that got no answer (what it waited on, a stuck Lite daemon, stays stuck).
      if (attempt >= 3 || result.stuck) throw new Error(`the graph dump failed: ${result.stderr.slice(-2000)}`);
    }
  } finally {
    rmSync(dirname(out), { recursive: true, force: true });
  }
}

/**
 * Compares the graph of `root` with a full index of a copy of its tree written into `fresh` — a graph of its
 * own (on a shared one, Module nodes, shared by name, would mix the two).
 *
 * On FalkorDB Lite a `cgc mcp start` owns the fresh graph's daemon from before the index to after the dump, so
 * the index and the dump connect to one daemon and no daemon loads the saved graph: FalkorDB 4.16.2 (falkordblite
 * 0.9.0) can hang for good while loading it (docs/cgc-compat.md, "A daemon stuck loading its graph").
 */
export async function compareWithFullIndex(
  root: string,
  graph: GraphAccess,
  fresh: GraphAccess,
): Promise<ParityResult> {
  const copy = mkdtempSync(join(tmpdir(), "pi-cgc-parity-"));
  // The same tree under the same folder name (the Repository node's name); the dump's paths are relative.
  const tree = join(copy, basename(root));
  const owner =
    fresh.name === "falkordb" ? cgcStart(["mcp", "start"], { cwd: copy, env: fresh.env, cgc: fresh.cgc }) : undefined;
  try {
    await owner?.waitForLine("stderr", /MCP Server is running/);
    cpSync(root, tree, { recursive: true }); // .git too: the Repository node records HEAD
    const indexed = await cgcExec(["index", tree], { cwd: tree, env: fresh.env, cgc: fresh.cgc });
    // cgc prints its errors on stdout (rich), its banner on stderr.
    if (indexed.code !== 0)
      throw new Error(
        `the full index of the copy failed (exit ${indexed.code}): ${indexed.stderr.slice(-1000)}${indexed.stdout.slice(-3000)}`,
      );
    const ours = await graphDump(root, graph);
    const theirs = (await graphDump(tree, fresh)).map((line) => line.split(tree).join(root));
    const missing = theirs.filter((line) => !ours.includes(line));
    const extra = ours.filter((line) => !theirs.includes(line));
    if (missing.length + extra.length === 0) return { missing, extra };
    const keptIn = mkdtempSync(join(tmpdir(), "pi-cgc-parity-diff-"));
    writeFileSync(join(keptIn, "graph.txt"), `${ours.join("\n")}\n`);
    writeFileSync(join(keptIn, "full-index.txt"), `${theirs.join("\n")}\n`);
    return { missing, extra, keptIn };
  } finally {
    if (owner) await stopEscalating(owner);
    rmSync(copy, { recursive: true, force: true });
  }
}

/** `root`'s graph in the CGC home of `env` (the default backend) against a full index of the same tree in a new home. */
export async function compareWithFullIndexInNewHome(root: string, env: Record<string, string>): Promise<ParityResult> {
  const fresh = makeCgcHome();
  try {
    return await compareWithFullIndex(root, { cgc: cgcBinary(), env }, { cgc: cgcBinary(), env: fresh.env });
  } finally {
    fresh.cleanup();
  }
}
