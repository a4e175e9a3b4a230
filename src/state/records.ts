// Where pi-cgc keeps what it must remember about one workspace's graph between sessions: in pi's agent
// directory (never in the workspace, never among CGC's own files), one file per workspace and database.
import { createHash } from "node:crypto";
import { join } from "node:path";
import { agentDir } from "../config/load.ts";

/** The database a workspace's graph lives in, as far as the environment names it. */
const DATABASE_VARIABLES = ["HOME", "DEFAULT_DATABASE", "FALKORDB_HOST", "FALKORDB_PORT", "NEO4J_URI"];

/**
 * `kind` names the record: `runs` (an unfinished index or sync), `trees` (the tree the graph reflects), `writes`
 * (when pi-cgc wrote the graph: src/lifecycle/provenance.ts), or
 * `engine` (a folder: the engine's warm-start cache).
 */
export function graphRecordPath(
  env: NodeJS.ProcessEnv,
  root: string,
  kind: "runs" | "trees" | "writes" | "engine",
): string {
  const key = [root, ...DATABASE_VARIABLES.map((name) => env[name] ?? "")].join("\0");
  const name = createHash("sha256").update(key).digest("hex").slice(0, 24);
  return join(agentDir(env), "pi-cgc", kind, kind === "engine" ? name : `${name}.json`);
}
