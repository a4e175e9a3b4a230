// pi-cgc's engine script (engine/pi-cgc-engine.py), run by cgc's own Python: the incremental engine
// (src/freshness/engine.ts), and pi-cgc's own full index.
import { existsSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { cgcInterpreter } from "./interpreter.ts";
import type { RunOptions } from "./runner.ts";

/**
 * A file shipped in pi-cgc's engine/ folder. This module runs from src/cgc/ (tests, tsx) or bundled into
 * extensions/pi-cgc/ (what pi loads): the package's folder is the nearest one above it that holds engine/.
 */
export function engineFile(name: string): string {
  const here = dirname(fileURLToPath(import.meta.url));
  for (let dir = here; ; dir = dirname(dir)) {
    if (existsSync(join(dir, "engine", name))) return join(dir, "engine", name);
    if (dirname(dir) === dir) return join(here, "engine", name); // not found: the path named in errors
  }
}

export const ENGINE_SCRIPT = engineFile("pi-cgc-engine.py");

/**
 * The cgc versions the engine was proven on (parity with a full index): any other falls back to full rebuilds.
 * One list, shipped in the engine's package and read by the engine too (its cgc_contract.PROVEN_VERSIONS); a list
 * that cannot be read proves nothing.
 */
export const PROVEN_CGC_VERSIONS: readonly string[] = provenVersions(
  engineFile("pi_cgc_engine/proven-cgc-versions.json"),
);

export function provenVersions(path: string): string[] {
  try {
    const { versions } = JSON.parse(readFileSync(path, "utf8")) as { versions?: unknown };
    return Array.isArray(versions) ? versions.filter((v): v is string => typeof v === "string") : [];
  } catch {
    return [];
  }
}

/** The engine's parse store: each file's parse kept by its content, shared by every workspace (docs/engine.md). */
export interface ParseStoreOptions {
  dir: string;
  /** Its bound in megabytes; 0 keeps none. */
  mb: number;
}

/** The engine's arguments for the parse store, before its command (serve and index alike). */
export function parseStoreArgs(store: ParseStoreOptions | undefined): string[] {
  return store ? ["--parse-store", store.dir, "--parse-store-mb", String(store.mb)] : [];
}

export function engineScriptPresent(): boolean {
  return existsSync(ENGINE_SCRIPT);
}

/**
 * How to run a full index (`index [--force] <root>`): pi-cgc's own index, run by the engine script in cgc's
 * Python with cgc's own discovery, parser and resolution, the graph written whole and the engine's cache left
 * warm in `cacheDir` (engine/pi_cgc_engine/indexer.py). The script runs cgc's own index itself where it cannot
 * write the graph (a backend it was not proven on, a plain index of a repository the graph already has).
 * Undefined — cgc itself — on a cgc the engine was not proven on, with the engine switched off, or when cgc's
 * Python or the script cannot be found.
 */
export function wholeIndexProgram(facts: {
  cgcVersion: string | undefined;
  engineOn: boolean;
  executable: string;
  env: NodeJS.ProcessEnv;
  cacheDir: string;
  parseStore?: ParseStoreOptions;
}): RunOptions["through"] {
  if (!facts.engineOn) return undefined;
  if (!facts.cgcVersion || !PROVEN_CGC_VERSIONS.includes(facts.cgcVersion) || !engineScriptPresent()) return undefined;
  const interpreter = cgcInterpreter(facts.executable, facts.env);
  if (!interpreter.ok) return undefined;
  return {
    path: interpreter.python,
    name: "pi-cgc's index (the engine script)",
    leading: [ENGINE_SCRIPT, "--cache-dir", facts.cacheDir, ...parseStoreArgs(facts.parseStore)],
  };
}
