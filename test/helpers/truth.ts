// How true cgc's call graph is, measured against a type-aware reference: SCIP indexes made by
// @sourcegraph/scip-python (pyright) and @sourcegraph/scip-typescript (the TypeScript compiler) on pinned
// packages fetched from PyPI and npm. Shared by test/integration/truth.test.ts (floors) and bench/truth.ts
// (the published table).
//
// A pair is (calling definition → called definition), both Function nodes of the corpus's graph:
// - reference: an occurrence that is not a definition, whose symbol is defined in the corpus at a Function
//   node's line, and that is a call (the source text after it, past whitespace, is `(`), attributed to the
//   innermost enclosing function (the definitions' enclosing_range from SCIP, else the graph's own
//   line_number..end_line). Calls with no enclosing function (module level; cgc's `<module>` Function nodes)
//   are left out, and so are calls whose target is not a Function node (a class: `Foo(`, `new Foo(`), on both
//   sides alike.
// - graph: CALLS and HEURISTIC_CALLS edges of a real `cgc index` between Function nodes, with each edge's
//   confidence_label (EXTRACTED, INFERRED, AMBIGUOUS).
import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { fromBinary } from "@bufbuild/protobuf";
// The generated module itself: the package's root also ships an index.ts, which TypeScript would type-check.
import { IndexSchema } from "@c4312/scip/scip_pb.js";
import { isConfirmedCall, listedSites } from "../../src/agent/call-confidence.ts";
import { ENGINE_SCRIPT } from "../../src/cgc/engine-script.ts";
import { parseQueryJson, type QueryRow } from "../../src/cgc/parse.ts";
import { cgcExec, makeCgcHome, PROJECT_ROOT } from "./cgc-env.ts";

export type Language = "python" | "typescript";

export interface Corpus {
  name: string;
  version: string;
  language: Language;
  registry: "pypi" | "npm";
  /** The archive's file name as `pip download` / `npm pack` write it. */
  archive: string;
  /** sha256 of the archive, pinned when the corpus was chosen. */
  sha256: string;
  /** Only archive members under this prefix are unpacked, with the prefix's first `strip` segments removed. */
  prefix: string;
  strip: number;
}

export const CORPORA = {
  itsdangerous: {
    name: "itsdangerous",
    version: "2.2.0",
    language: "python",
    registry: "pypi",
    archive: "itsdangerous-2.2.0-py3-none-any.whl",
    sha256: "c6242fc49e35958c8b15141343aa660db5fc54d4f13a1db01a3f5891b98700ef",
    prefix: "itsdangerous/",
    strip: 0,
  },
  jinja2: {
    name: "jinja2",
    version: "3.1.6",
    language: "python",
    registry: "pypi",
    archive: "jinja2-3.1.6-py3-none-any.whl",
    sha256: "85ece4451f492d0c13c5dd7c13a64681a86afae63a5f347908daf103ce6d2f67",
    prefix: "jinja2/",
    strip: 0,
  },
  click: {
    name: "click",
    version: "8.1.8",
    language: "python",
    registry: "pypi",
    archive: "click-8.1.8-py3-none-any.whl",
    sha256: "63c132bbbed01578a06712a2d1f497bb62d9c1c0d329b7903a866228027263b2",
    prefix: "click/",
    strip: 0,
  },
  "query-core": {
    name: "@tanstack/query-core",
    version: "5.66.0",
    language: "typescript",
    registry: "npm",
    archive: "tanstack-query-core-5.66.0.tgz",
    sha256: "695ca3ba918e8ee706d6ac75dfb77c2fd744a659b893ac5acd915b0e4fac34ff",
    prefix: "package/src/",
    strip: 1,
  },
} as const satisfies Record<string, Corpus>;

export const TRUTH_CACHE = join(PROJECT_ROOT, ".cache", "truth");
const DOWNLOADS = join(TRUTH_CACHE, "downloads");
const VENV_PYTHON = join(PROJECT_ROOT, ".venv", "bin", "python");
const BIN = join(PROJECT_ROOT, "node_modules", ".bin");

function sha256(file: string): string {
  return createHash("sha256").update(readFileSync(file)).digest("hex");
}

/** The corpus's archive in the cache, downloaded once from its registry and checked against the pinned hash. */
export function fetchArchive(corpus: Corpus): string {
  mkdirSync(DOWNLOADS, { recursive: true });
  const file = join(DOWNLOADS, corpus.archive);
  if (!existsSync(file)) {
    const staging = mkdtempSync(join(DOWNLOADS, ".staging-"));
    try {
      if (corpus.registry === "pypi") {
        const spec = `${corpus.name}==${corpus.version}`;
        const args = ["-m", "pip", "download", "--no-deps", "--only-binary=:all:", "-q", "-d", staging, spec];
        execFileSync(VENV_PYTHON, args, { stdio: ["ignore", "ignore", "pipe"] });
      } else {
        execFileSync("npm", ["pack", `${corpus.name}@${corpus.version}`, "--silent"], { cwd: staging, stdio: "pipe" });
      }
      const got = join(staging, corpus.archive);
      if (!existsSync(got)) throw new Error(`${corpus.name} ${corpus.version}: ${corpus.archive} not downloaded`);
      checkHash(corpus, got);
      renameSync(got, file);
    } finally {
      rmSync(staging, { recursive: true, force: true });
    }
  }
  checkHash(corpus, file);
  return file;
}

function checkHash(corpus: Corpus, file: string): void {
  const actual = sha256(file);
  if (actual !== corpus.sha256) {
    throw new Error(`${corpus.archive}: sha256 ${actual}, pinned ${corpus.sha256}`);
  }
}

// Python's zipfile and tarfile, members under the prefix only, no member outside the target.
const UNPACK = `
import sys, os, zipfile, tarfile
archive, target, prefix, strip = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
def place(name):
    rel = "/".join(name.split("/")[strip:])
    out = os.path.realpath(os.path.join(target, rel))
    if not out.startswith(os.path.realpath(target) + os.sep):
        raise SystemExit("member outside target: " + name)
    os.makedirs(os.path.dirname(out), exist_ok=True)
    return out
if archive.endswith(".whl") or archive.endswith(".zip"):
    with zipfile.ZipFile(archive) as z:
        for name in z.namelist():
            if name.startswith(prefix) and not name.endswith("/"):
                with open(place(name), "wb") as f:
                    f.write(z.read(name))
else:
    with tarfile.open(archive, "r:gz") as t:
        for m in t.getmembers():
            if m.isfile() and m.name.startswith(prefix):
                with open(place(m.name), "wb") as f:
                    f.write(t.extractfile(m).read())
`;

export interface CorpusTree {
  corpus: Corpus;
  /** A fresh directory holding the corpus's sources (a package folder for Python, src/ for TypeScript). */
  root: string;
  cleanup(): void;
}

/** Unpacks the (fetched, verified) corpus into a fresh temporary directory of its own. */
export function unpackCorpus(corpus: Corpus): CorpusTree {
  const archive = fetchArchive(corpus);
  const root = mkdtempSync(join(tmpdir(), `pi-cgc-truth-${corpus.name.replace(/\W/g, "-")}-`));
  execFileSync(VENV_PYTHON, ["-c", UNPACK, archive, root, corpus.prefix, String(corpus.strip)]);
  return { corpus, root, cleanup: () => rmSync(root, { recursive: true, force: true }) };
}

// ---------------------------------------------------------------------------------------------
// The reference

/** A Python with an empty environment, so pyright resolves the corpus to itself and never to an installed copy. */
function emptyPythonBin(): string {
  const venv = join(TRUTH_CACHE, "empty-venv");
  if (!existsSync(join(venv, "bin", "python"))) {
    // Made aside and renamed into place, so a test and a bench starting together do not share a half-made one.
    mkdirSync(TRUTH_CACHE, { recursive: true });
    const staging = mkdtempSync(join(TRUTH_CACHE, ".empty-venv-"));
    execFileSync(VENV_PYTHON, ["-m", "venv", "--without-pip", staging]);
    try {
      renameSync(staging, venv);
    } catch {
      rmSync(staging, { recursive: true, force: true });
    }
  }
  return join(venv, "bin");
}

/** Runs the SCIP indexer of the corpus's language over `root` (the project root) and returns the index file. */
export function runReference(tree: CorpusTree): string {
  const output = join(mkdtempSync(join(tmpdir(), "pi-cgc-scip-")), "index.scip");
  const common = { cwd: tree.root, stdio: ["ignore", "pipe", "pipe"] as ("ignore" | "pipe")[] };
  if (tree.corpus.language === "python") {
    const environment = join(output, "..", "environment.json");
    // An empty package list: nothing of this machine's installed packages enters the index.
    writeFileSync(environment, "[]\n");
    const args = ["index", "--project-name", tree.corpus.name, "--project-version", tree.corpus.version];
    execFileSync(join(BIN, "scip-python"), [...args, "--environment", environment, "--output", output, "."], {
      ...common,
      env: { ...process.env, PATH: `${emptyPythonBin()}:${process.env.PATH ?? ""}` },
    });
  } else {
    execFileSync(join(BIN, "scip-typescript"), ["index", "--infer-tsconfig", "--output", output], common);
  }
  return output;
}

// ---------------------------------------------------------------------------------------------
// The graph

export interface FunctionNode {
  path: string;
  line: number;
  end: number;
  name: string;
}

export interface GraphEdge {
  caller: string;
  callee: string;
  type: "CALLS" | "HEURISTIC_CALLS";
  label: string;
  /** cgc's resolution_tier (the step of its resolver that linked the call). */
  tier: string;
  /** The call as cgc read it (`full_call_name`: `helper`, `self.helper`, `obj.attr.helper`). */
  call: string;
  /** The call's line. */
  line: number;
  /** Whether it links a function to itself. */
  recursive?: boolean;
}

export interface Graph {
  functions: FunctionNode[];
  edges: GraphEdge[];
  /** Keys of the Function nodes the graph gives at least one caller (a function, not module-level code). */
  called: Set<string>;
  /** pi-cgc's possible callers (engine/pi_cgc_engine/possible_calls.py) of every function, by function. */
  possible: PossiblePair[];
  indexMs: number;
}

/** A call site pi-cgc lists as a possible caller: the calling function, the function it may call, and why. */
export interface PossiblePair {
  caller: string;
  callee: string;
  /** The call's line. */
  line: number;
  /** The rule that found it (engine/pi_cgc_engine/possible_calls.py), and why in words. */
  rule: string;
  why: string;
  rank: number;
}

/** cgc 0.6.13 gives each file's module-level code a Function node of this name; it is left out on both sides. */
export const MODULE_FUNCTION = "<module>";

export const fnKey = (path: string, line: number): string => `${path}:${line}`;

/** The form of a call as cgc read it (full_call_name): a plain name, a receiver of the class's own, or another chain. */
export function callForm(call: string): string {
  if (call === "") return "call not recorded";
  if (!call.includes(".")) return "plain name";
  return /^(self|this|cls)\.[^.]+$/.test(call) ? "self./this." : "attribute chain";
}

async function query(cypher: string, cwd: string, env: Record<string, string>): Promise<QueryRow[]> {
  const run = await cgcExec(["query", cypher], { cwd, env, timeoutMs: 120_000 });
  const parsed = parseQueryJson(run.stdout);
  if (run.code !== 0 || parsed.kind !== "ok") throw new Error(`cgc query failed (${run.code}): ${run.stderr}`);
  return parsed.value;
}

/** Indexes the corpus with the real cgc (default backend, a fresh home) and reads its functions and call edges. */
export async function indexGraph(tree: CorpusTree): Promise<Graph> {
  const home = makeCgcHome();
  try {
    const started = performance.now();
    const run = await cgcExec(["index", "."], { cwd: tree.root, env: home.env, timeoutMs: 900_000 });
    const indexMs = performance.now() - started;
    if (run.code !== 0) throw new Error(`cgc index exited ${run.code}: ${run.stderr}\n${run.stdout}`);
    const rel = (path: unknown) => relative(tree.root, String(path));
    const functions = (
      await query(
        "MATCH (f:Function) RETURN f.path AS path, f.line_number AS line, f.end_line AS last, f.name AS name",
        tree.root,
        home.env,
      )
    )
      .map((row) => ({ path: rel(row.path), line: Number(row.line), end: Number(row.last), name: String(row.name) }))
      .filter((fn) => fn.name !== MODULE_FUNCTION);
    const edges: GraphEdge[] = [];
    const called = new Set<string>();
    for (const type of ["CALLS", "HEURISTIC_CALLS"] as const) {
      const rows = await query(
        `MATCH (a:Function)-[r:${type}]->(b:Function) WHERE a.name <> '${MODULE_FUNCTION}' ` +
          "RETURN a.path AS ap, a.line_number AS al, " +
          "b.path AS bp, b.line_number AS bl, r.confidence_label AS label, r.resolution_tier AS tier, " +
          "r.full_call_name AS call, r.line_number AS line",
        tree.root,
        home.env,
      );
      for (const row of rows) {
        const caller = fnKey(rel(row.ap), Number(row.al));
        const callee = fnKey(rel(row.bp), Number(row.bl));
        edges.push({
          caller,
          callee,
          recursive: caller === callee,
          type,
          label: row.label === null || row.label === undefined ? "(none)" : String(row.label),
          tier: row.tier === null || row.tier === undefined ? "–" : String(row.tier),
          call: row.call === null || row.call === undefined ? "" : String(row.call),
          line: Number(row.line),
        });
      }
    }
    for (const edge of edges) called.add(edge.callee);
    // cgc_relations' rule: a callee's fallback sites only where it has no other caller.
    const byCallee = new Map<string, PossiblePair[]>();
    for (const pair of possiblePairs(tree)) byCallee.set(pair.callee, [...(byCallee.get(pair.callee) ?? []), pair]);
    const possible = [...byCallee].flatMap(([callee, sites]) => listedSites(sites, called.has(callee) ? 1 : 0));
    return { functions, edges, called, possible, indexMs };
  } finally {
    home.cleanup();
  }
}

/** The engine's possible call sites of every function of the tree (`pi-cgc-engine.py possible`), module level left out. */
function possiblePairs(tree: CorpusTree): PossiblePair[] {
  const out = execFileSync(VENV_PYTHON, [ENGINE_SCRIPT, "possible", "--root", tree.root], {
    cwd: tree.root,
    encoding: "utf8",
    maxBuffer: 256 * 1024 * 1024,
    stdio: ["ignore", "pipe", "pipe"],
  });
  const rel = (path: string) => relative(tree.root, path);
  const pairs: PossiblePair[] = [];
  for (const line of out.split("\n")) {
    if (line.trim() === "") continue;
    const site = JSON.parse(line) as {
      target: { path: string; line: number };
      path: string;
      line: number;
      caller: string;
      callerLine: number;
      rule: string;
      why: string;
      rank: number;
    };
    if (site.caller === MODULE_FUNCTION) continue;
    pairs.push({
      caller: fnKey(rel(site.path), site.callerLine),
      callee: fnKey(rel(site.target.path), site.target.line),
      line: site.line,
      rule: site.rule,
      why: site.why,
      rank: site.rank,
    });
  }
  return pairs;
}

// ---------------------------------------------------------------------------------------------
// Reference call sites and pairs

/** `super` is Python's `super().name(` and TypeScript's `super.name(`; `self/this method` takes `cls.` too. */
export const SHAPES = ["plain", "self/this method", "super", "other attribute chain", "nested in args"];
export type Shape = (typeof SHAPES)[number];

export interface CallSite {
  path: string;
  /** 1-based line of the reference occurrence. */
  line: number;
  caller: string;
  callee: string;
  /** The shape from the text before the name; `nested` is set as well when the call is inside another's arguments. */
  shape: Shape;
  nested: boolean;
}

export interface Reference {
  sites: CallSite[];
  /** Calls to corpus functions left out because no function encloses them (module level). */
  moduleLevel: number;
  /** Function definitions of the reference that no Function node of the graph has at the same path and line. */
  unmappedDefinitions: number;
  definitions: number;
}

const DEFINITION = 1;

interface Span {
  key: string;
  start: number;
  end: number;
}

/** Reads the SCIP index and keeps the calls between the graph's Function nodes (see the file's header). */
const readScip = (file: string) => fromBinary(IndexSchema, readFileSync(file));

export function referenceCalls(scipFile: string, root: string, graph: Graph): Reference {
  const index = readScip(scipFile);
  const functionAt = new Map(graph.functions.map((f) => [fnKey(f.path, f.line), f]));
  const symbolKey = (doc: string, symbol: string) => (symbol.startsWith("local ") ? `${doc}#${symbol}` : symbol);
  // Definitions: symbol → the Function node at its definition line; per file, the spans of those functions.
  const definedAt = new Map<string, string>();
  const spans = new Map<string, Span[]>();
  let definitions = 0;
  let unmapped = 0;
  for (const doc of index.documents) {
    const fileSpans: Span[] = [];
    const lines = readFileSync(join(root, doc.relativePath), "utf8").split("\n");
    for (const occurrence of doc.occurrences) {
      if ((occurrence.symbolRoles & DEFINITION) === 0) continue;
      const [line = 0, from = 0, to = 0] = occurrence.range;
      const key = fnKey(doc.relativePath, line + 1);
      // The definition of the function itself, not a parameter or local defined on its first line.
      const named = functionAt.get(key);
      const fn =
        named?.name === lines[line]?.slice(from, occurrence.range.length === 3 ? to : undefined) ? named : undefined;
      const isFunctionSymbol = /\)\.$/.test(occurrence.symbol);
      if (isFunctionSymbol) definitions++;
      if (fn === undefined) {
        if (isFunctionSymbol) unmapped++;
        continue;
      }
      definedAt.set(symbolKey(doc.relativePath, occurrence.symbol), key);
      const enclosing = occurrence.enclosingRange;
      const start = enclosing.length > 0 ? (enclosing[0] ?? 0) + 1 : fn.line;
      const end = enclosing.length === 4 ? (enclosing[2] ?? 0) + 1 : enclosing.length === 3 ? start : fn.end;
      if (!fileSpans.some((span) => span.key === key)) fileSpans.push({ key, start, end });
    }
    spans.set(doc.relativePath, fileSpans);
  }
  // Functions the reference gave no span for (no definition occurrence mapped) enclose by the graph's lines.
  for (const fn of graph.functions) {
    const fileSpans = spans.get(fn.path) ?? [];
    const key = fnKey(fn.path, fn.line);
    if (!fileSpans.some((span) => span.key === key)) fileSpans.push({ key, start: fn.line, end: fn.end });
    spans.set(fn.path, fileSpans);
  }
  const sites: CallSite[] = [];
  let moduleLevel = 0;
  for (const doc of index.documents) {
    const text = readFileSync(join(root, doc.relativePath), "utf8");
    const lines = text.split("\n");
    const lineStarts: number[] = [];
    let offset = 0;
    for (const line of lines) {
      lineStarts.push(offset);
      offset += line.length + 1;
    }
    for (const occurrence of doc.occurrences) {
      if ((occurrence.symbolRoles & DEFINITION) !== 0) continue;
      const callee = definedAt.get(symbolKey(doc.relativePath, occurrence.symbol));
      if (callee === undefined) continue;
      const [startLine = 0, startChar = 0] = occurrence.range;
      const endLine = occurrence.range.length === 4 ? (occurrence.range[2] ?? 0) : startLine;
      const endChar = occurrence.range.length === 4 ? (occurrence.range[3] ?? 0) : (occurrence.range[2] ?? 0);
      if (!isCall(text.slice((lineStarts[endLine] ?? 0) + endChar))) continue;
      const line = startLine + 1;
      const enclosing = (spans.get(doc.relativePath) ?? [])
        .filter((span) => span.start <= line && line <= span.end)
        .sort((a, b) => a.end - a.start - (b.end - b.start))[0];
      if (enclosing === undefined) {
        moduleLevel++;
        continue;
      }
      const before = lines[startLine]?.slice(0, startChar) ?? "";
      // An overload's own `def name(` is a reference to the first declaration in pyright's index, not a call.
      if (/(?:^|\s)(?:def|function)\s+$/.test(before)) continue;
      // `new Foo(` reaches a class in cgc's graph (a CALLS edge to a Class node), like Python's `Foo(`: left out.
      if (/(?:^|[^\w$.])new\s+$/.test(before)) continue;
      const at = (lineStarts[startLine] ?? 0) + startChar;
      sites.push({
        path: doc.relativePath,
        line,
        caller: enclosing.key,
        callee,
        shape: shapeOf(before),
        nested: insideCallArguments(text, at),
      });
    }
  }
  return { sites, moduleLevel, unmappedDefinitions: unmapped, definitions };
}

/** Whether the text right after a name makes it a call: `(`, `?.(`, or TypeScript type arguments then `(`. */
export function isCall(after: string): boolean {
  let rest = after.trimStart();
  if (rest.startsWith("?.(")) return true;
  if (rest.startsWith("<")) {
    let depth = 0;
    let i = 0;
    for (; i < rest.length && i < 2000; i++) {
      if (rest[i] === "<") depth++;
      else if (rest[i] === ">" && rest[i - 1] !== "=") depth--;
      else if (rest[i] === ";" || rest[i] === "{" || rest[i] === ")") return false;
      if (depth === 0) break;
    }
    rest = rest.slice(i + 1).trimStart();
  }
  return rest.startsWith("(");
}

/** The call's shape from the text on its line before the called name. */
export function shapeOf(before: string): Shape {
  if (/(?:^|[^\w$.])super(?:\([^()]*\))?\s*\.\s*$/.test(before)) return "super";
  if (/(?:^|[^\w.$])(?:self|this|cls)\s*\.\s*$/.test(before)) return "self/this method";
  if (/\.\s*$/.test(before)) return "other attribute chain";
  return "plain";
}

const NOT_CALLS = new Set(["if", "elif", "while", "for", "switch", "return", "catch", "and", "or", "not", "in"]);

/** Whether the offset sits inside the argument list of another call (scanning back over balanced brackets). */
export function insideCallArguments(text: string, at: number): boolean {
  let depth = 0;
  for (let i = at - 1; i >= 0 && i > at - 2000; i--) {
    const c = text[i];
    if (c === ")" || c === "]") depth++;
    else if (c === "[") depth = Math.max(0, depth - 1);
    else if (c === "{" || c === "}" || c === ";") {
      if (depth === 0) return false;
    } else if (c === "(") {
      if (depth > 0) {
        depth--;
        continue;
      }
      const head = /([\w$]+|[)\]])\s*$/.exec(text.slice(Math.max(0, i - 80), i));
      if (head === null) continue;
      if (NOT_CALLS.has(head[1] ?? "")) return false;
      const line = text.slice(text.lastIndexOf("\n", i) + 1, i);
      if (/^\s*(?:async\s+)?def\s|function\b/.test(line)) return false;
      return true;
    }
  }
  return false;
}

// ---------------------------------------------------------------------------------------------
// Metrics

export interface Ratio {
  hit: number;
  of: number;
}

export interface TruthMetrics {
  referencePairs: number;
  graphPairs: number;
  truePairs: number;
  precision: Ratio;
  recall: Ratio;
  /** Callees with at least one true caller that the graph gives no caller at all. */
  falseNone: Ratio;
  /** Precision of the graph's pairs per edge type and confidence label (a pair counts under each it carries). */
  byLabel: Array<{ label: string } & Ratio>;
  /** The same per edge type, label and cgc's resolution_tier. */
  /** Per edge type, label, tier and call form (callForm), with whether cgc_relations lists it as callers. */
  byTier: Array<{ label: string; confirmed: boolean } & Ratio>;
  /**
   * pi-cgc's answers: precision of the pairs listed plainly as callers (a pair with at least one confirmed edge:
   * src/agent/call-confidence.ts) and of those listed only as possible callers (the graph's other edges and
   * the engine's possible call sites); recall and false none of both lists together.
   */
  plain: Ratio;
  possible: Ratio;
  answerRecall: Ratio;
  answerFalseNone: Ratio;
  /** Precision of the engine's possible call sites per rule, counting only pairs the graph does not hold. */
  byRule: Array<{ rule: string } & Ratio>;
  /** Recall of the reference's call sites per shape, by the graph alone and by both lists. */
  byShape: Array<{ shape: Shape; answer: Ratio } & Ratio>;
  moduleLevel: number;
  sites: number;
}

export const rate = (r: Ratio): number => (r.of === 0 ? Number.NaN : r.hit / r.of);

export function measure(reference: Reference, graph: Graph): TruthMetrics {
  const pair = (caller: string, callee: string) => `${caller} -> ${callee}`;
  const truth = new Set(reference.sites.map((site) => pair(site.caller, site.callee)));
  const found = new Set(graph.edges.map((edge) => pair(edge.caller, edge.callee)));
  const truePairs = [...found].filter((p) => truth.has(p)).length;
  // Each group's pairs, and whether cgc_relations lists the group as callers (every edge of a group of
  // byTier shares what the rule reads: type, label, tier and whether the call is a plain name).
  const precisionBy = (name: (edge: GraphEdge) => string) => {
    const groups = new Map<string, { pairs: Set<string>; confirmed: boolean }>();
    for (const edge of graph.edges) {
      const group = groups.get(name(edge)) ?? { pairs: new Set<string>(), confirmed: isConfirmedCall(edge) };
      group.pairs.add(pair(edge.caller, edge.callee));
      groups.set(name(edge), group);
    }
    return [...groups.entries()]
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([label, { pairs, confirmed }]) => ({
        label,
        hit: [...pairs].filter((p) => truth.has(p)).length,
        of: pairs.size,
        confirmed,
      }));
  };
  const byLabel = precisionBy((edge) => `${edge.type} ${edge.label}`);
  const byTier = precisionBy((edge) => `${edge.type} ${edge.label}, tier ${edge.tier}, ${callForm(edge.call)}`);
  const confirmed = new Set(graph.edges.filter((edge) => isConfirmedCall(edge)).map((e) => pair(e.caller, e.callee)));
  const listed = new Set([...found, ...graph.possible.map((p) => pair(p.caller, p.callee))]);
  const possibleOnly = [...listed].filter((p) => !confirmed.has(p));
  const hits = (pairs: Iterable<string>): Ratio => {
    const all = [...pairs];
    return { hit: all.filter((p) => truth.has(p)).length, of: all.length };
  };
  const plain = hits(confirmed);
  const possible = hits(possibleOnly);
  const rules = new Map<string, Set<string>>();
  for (const p of graph.possible) {
    const key = pair(p.caller, p.callee);
    if (found.has(key)) continue;
    const rule = p.rule;
    rules.set(rule, (rules.get(rule) ?? new Set()).add(key));
  }
  const byRule = [...rules.entries()]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([rule, pairs]) => ({ rule, ...hits(pairs) }));
  const byShape = SHAPES.map((shape) => {
    const sites = reference.sites.filter((site) => (shape === "nested in args" ? site.nested : site.shape === shape));
    const recalled = (set: Set<string>) => sites.filter((site) => set.has(pair(site.caller, site.callee))).length;
    return { shape, hit: recalled(found), of: sites.length, answer: { hit: recalled(listed), of: sites.length } };
  }).filter((row) => row.of > 0);
  const callees = new Set(reference.sites.map((site) => site.callee));
  const none = [...callees].filter((callee) => !graph.called.has(callee)).length;
  const possiblyCalled = new Set(graph.possible.map((p) => p.callee));
  const answerNone = [...callees].filter((callee) => !graph.called.has(callee) && !possiblyCalled.has(callee)).length;
  return {
    referencePairs: truth.size,
    graphPairs: found.size,
    truePairs,
    precision: { hit: truePairs, of: found.size },
    recall: { hit: truePairs, of: truth.size },
    falseNone: { hit: none, of: callees.size },
    byLabel,
    byTier,
    plain,
    possible,
    answerRecall: { hit: [...truth].filter((p) => listed.has(p)).length, of: truth.size },
    answerFalseNone: { hit: answerNone, of: callees.size },
    byRule,
    byShape,
    moduleLevel: reference.moduleLevel,
    sites: reference.sites.length,
  };
}

export interface TruthRun {
  corpus: Corpus;
  files: number;
  reference: Reference;
  graph: Graph;
  metrics: TruthMetrics;
  referenceMs: number;
}

/** Fetches, unpacks, indexes with cgc and with the reference, and measures one corpus. */
export async function truthRun(corpus: Corpus): Promise<TruthRun> {
  const tree = unpackCorpus(corpus);
  try {
    const graph = await indexGraph(tree);
    const started = performance.now();
    const scip = runReference(tree);
    const referenceMs = performance.now() - started;
    try {
      const reference = referenceCalls(scip, tree.root, graph);
      const files = readScip(scip).documents.length;
      return { corpus, files, reference, graph, metrics: measure(reference, graph), referenceMs };
    } finally {
      rmSync(join(scip, ".."), { recursive: true, force: true });
    }
  } finally {
    tree.cleanup();
  }
}

const percent = (r: Ratio): string => (r.of === 0 ? "–" : `${((100 * r.hit) / r.of).toFixed(1)}% (${r.hit}/${r.of})`);

/** The Markdown tables of one or more runs: the headline per corpus, then labels and shapes. */
export function truthTables(runs: TruthRun[]): string {
  const row = (cells: string[]) => `| ${cells.join(" | ")} |`;
  const head = (cells: string[]) => [row(cells), row(cells.map(() => "---"))];
  const out: string[] = [];
  out.push(
    ...head([
      "Corpus",
      "Language",
      "Files",
      "Reference pairs",
      "Graph pairs",
      "Precision",
      "Recall",
      "False none",
      "Module-level calls left out",
    ]),
  );
  for (const run of runs) {
    const m = run.metrics;
    out.push(
      row([
        `${run.corpus.name} ${run.corpus.version}`,
        run.corpus.language,
        String(run.files),
        String(m.referencePairs),
        String(m.graphPairs),
        percent(m.precision),
        percent(m.recall),
        percent(m.falseNone),
        String(m.moduleLevel),
      ]),
    );
  }
  out.push("", "Precision per cgc edge type and confidence label:", "");
  out.push(...head(["Corpus", "Edge", "Precision"]));
  for (const run of runs) {
    for (const label of run.metrics.byLabel) out.push(row([run.corpus.name, label.label, percent(label)]));
  }
  out.push(
    "",
    "The same per cgc's resolution_tier (the resolver step that linked the call) and the call's form (a plain " +
      "name, `self.`/`this.`/`cls.` and one name, or any other attribute chain):",
    "",
  );
  out.push(...head(["Corpus", "Edge, tier", "Precision"]));
  for (const run of runs) {
    for (const tier of run.metrics.byTier) out.push(row([run.corpus.name, tier.label, percent(tier)]));
  }
  out.push("", "The same per edge type, label and tier, pooled over the corpora above:", "");
  out.push(...head(["Edge, tier", "Precision", "Listed by cgc_relations as"]));
  const pooled = new Map<string, Ratio & { confirmed: boolean }>();
  for (const run of runs) {
    for (const tier of run.metrics.byTier) {
      const sum = pooled.get(tier.label) ?? { hit: 0, of: 0, confirmed: tier.confirmed };
      sum.hit += tier.hit;
      sum.of += tier.of;
      pooled.set(tier.label, sum);
    }
  }
  for (const [label, sum] of [...pooled.entries()].sort(([a], [b]) => a.localeCompare(b))) {
    out.push(row([label, percent(sum), sum.confirmed ? "callers" : "possible callers"]));
  }
  out.push(
    "",
    "pi-cgc's answers beside the graph alone. Callers: the pairs with a confirmed edge (src/agent/call-confidence.ts: " +
      "the CALLS EXTRACTED classes pooled at 95% or more, tiers 1 and 6 and tier 2 of a plain name, but a super() " +
      "call linked to its own method). Possible callers: the graph's other edges and pi-cgc's own possible call " +
      "sites (engine/pi_cgc_engine/possible_calls.py). Recall and false none count both lists:",
    "",
  );
  out.push(
    ...head([
      "Corpus",
      "Graph: recall",
      "Graph: false none",
      "Callers: precision",
      "Possible callers: precision",
      "Recall of both",
      "False none of both",
    ]),
  );
  for (const run of runs) {
    const m = run.metrics;
    out.push(
      row([
        run.corpus.name,
        percent(m.recall),
        percent(m.falseNone),
        percent(m.plain),
        percent(m.possible),
        percent(m.answerRecall),
        percent(m.answerFalseNone),
      ]),
    );
  }
  out.push("", "Precision of pi-cgc's own possible call sites per rule (pairs the graph does not hold):", "");
  out.push(...head(["Corpus", "Rule", "Precision"]));
  for (const run of runs) {
    for (const rule of run.metrics.byRule) out.push(row([run.corpus.name, rule.rule, percent(rule)]));
  }
  out.push(
    "",
    "Recall per call shape of the reference call site, by the graph alone and by both lists (call sites; nested " +
      "in args overlaps the rest):",
    "",
  );
  out.push(...head(["Corpus", "Shape", "Graph", "Both lists"]));
  for (const run of runs) {
    for (const shape of run.metrics.byShape) {
      out.push(row([run.corpus.name, shape.shape, percent(shape), percent(shape.answer)]));
    }
  }
  return out.join("\n");
}

/**
 * The run's pairs as `path:name -> path:name`, from the reference, the graph or pi-cgc's possible call sites (with
 * their rule: `… -> …  (rule)`): for assertions that read.
 */
export function namedPairs(run: TruthRun, side: "reference" | "graph" | "possible"): Set<string> {
  const names = new Map(run.graph.functions.map((fn) => [fnKey(fn.path, fn.line), `${fn.path}:${fn.name}`]));
  const named = (key: string) => names.get(key) ?? key;
  if (side === "possible") {
    return new Set(run.graph.possible.map((p) => `${named(p.caller)} -> ${named(p.callee)}  (${p.rule})`));
  }
  const pairs = side === "reference" ? run.reference.sites : run.graph.edges;
  return new Set(pairs.map((pair) => `${named(pair.caller)} -> ${named(pair.callee)}`));
}
