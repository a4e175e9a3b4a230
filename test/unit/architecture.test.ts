// The import rule of docs/architecture.md: each module imports only from its own layer's folder and from the
// layers below it. The entry (src/index.ts) wires; nothing imports it, and nothing below the UI imports the UI.
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { PROJECT_ROOT } from "../helpers/cgc-env.ts";

const SRC = join(PROJECT_ROOT, "src");

/** Folder (or the entry) → its rank; a module may import from a lower rank or from its own folder. */
const RANK: Record<string, number> = {
  state: 0, // the one state model, its store, notices and the graph's ledger; config and workspace beside it
  config: 0,
  workspace: 0,
  cgc: 1, // the cgc program at the edge: spawning, parsing its output
  lifecycle: 2, // one session: readiness, announcements, maintenance, provenance
  agent: 3, // features, independent of each other
  freshness: 3,
  ui: 4, // what pi shows: chip, /cgc, settings, status
  entry: 5, // src/index.ts: wiring only
};
/** Folders of rank 0 form one core and import each other; features of one rank do not. */
const CORE = new Set(["state", "config", "workspace"]);

function layerOf(file: string): string {
  const rel = relative(SRC, file);
  return rel.includes("/") ? (rel.split("/")[0] as string) : "entry";
}

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? sources(join(dir, entry.name)) : entry.name.endsWith(".ts") ? [join(dir, entry.name)] : [],
  );
}

/** Every relative import of a file (static, type-only and dynamic), resolved to a path. */
function importsOf(file: string): string[] {
  const text = readFileSync(file, "utf8");
  const specifiers = [...text.matchAll(/(?:from|import)\s*\(?\s*["'](\.{1,2}\/[^"']+)["']/g)].map(
    (m) => m[1] as string,
  );
  return specifiers.map((specifier) => resolve(dirname(file), specifier));
}

/** May a module in layer `from` import one in layer `to`? */
function allowed(from: string, to: string): boolean {
  if (from === to || (CORE.has(from) && CORE.has(to))) return true;
  return to !== "entry" && (RANK[to] ?? Number.POSITIVE_INFINITY) < (RANK[from] ?? Number.NEGATIVE_INFINITY);
}

function violations(files: string[]): string[] {
  const found: string[] = [];
  for (const file of files) {
    const from = layerOf(file);
    for (const target of importsOf(file)) {
      if (!target.startsWith(SRC)) continue;
      const to = layerOf(target);
      if (!allowed(from, to))
        found.push(`${relative(PROJECT_ROOT, file)} (${from}) imports ${relative(PROJECT_ROOT, target)} (${to})`);
    }
  }
  return found;
}

describe("the graph's ledger", () => {
  it("is the one module that knows where pi-cgc's records of a graph live", () => {
    const ledger = join(SRC, "state", "ledger.ts");
    const naming = sources(SRC).filter(
      (file) => file !== ledger && /join\([^)]*["']pi-cgc["']|graph-written-elsewhere/.test(readFileSync(file, "utf8")),
    );
    expect(naming.map((file) => relative(PROJECT_ROOT, file))).toEqual([]);
  });
});

describe("the import rule", () => {
  const files = sources(SRC);

  it("knows every folder of src/", () => {
    expect(files.map(layerOf).filter((layer) => !(layer in RANK))).toEqual([]);
  });

  it("no module imports across it: not the entry, not the UI from below, not a higher layer", () => {
    expect(violations(files)).toEqual([]);
  });

  it("is the rule the docs state: what crosses is refused, what goes down or stays is allowed", () => {
    const layers = (from: string, to: string) => allowed(layerOf(join(SRC, from)), layerOf(join(SRC, to)));
    expect(layers("lifecycle/session.ts", "ui/chip.ts")).toBe(false);
    expect(layers("freshness/install.ts", "index.ts")).toBe(false);
    expect(layers("agent/tools.ts", "freshness/updates.ts")).toBe(false);
    expect(layers("cgc/runner.ts", "lifecycle/session.ts")).toBe(false);
    expect(layers("ui/command.ts", "index.ts")).toBe(false);
    expect(layers("ui/command.ts", "freshness/watcher.ts")).toBe(true);
    expect(layers("state/ledger.ts", "config/load.ts")).toBe(true);
    expect(layers("workspace/tracker.ts", "state/ledger.ts")).toBe(true);
    expect(layers("lifecycle/maintenance.ts", "freshness/quiet-sync.ts")).toBe(false);
    expect(layers("freshness/other-writers.ts", "agent/tools.ts")).toBe(false);
    expect(layers("index.ts", "ui/chip.ts")).toBe(true);
  });
});
