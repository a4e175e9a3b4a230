// What a change can break: `cgc_impact` (the working tree's uncommitted changes against HEAD) and the
// dependents the impact note names. The changed definitions come from the texts (signatures.ts: HEAD's
// against the working tree's); who depends on them comes from the graph, which the engine keeps equal to a
// full index of the working tree. One thing the graph cannot answer: who called a definition that is gone
// (removed, or renamed). cgc links a call only to a definition it finds, so after the update those calls
// have no edge; their files still import the old name or its module (IMPORTS edges of unchanged files stay),
// and a call of that name in such a file is the call site.
import { readFileSync } from "node:fs";
import { basename, dirname, extname, relative, resolve } from "node:path";
import { defineTool, type ExtensionContext } from "@mariozechner/pi-coding-agent";
import { Type } from "typebox";
import { count } from "../state/words.ts";
import { isConfirmedCall, possibleCallWhy } from "./call-confidence.ts";
import { edgeOf, type FunctionKey, reachCalls } from "./call-reach.ts";
import { IMPACT_TOOL_NAME } from "./catalog.ts";
import { type ChangedFile, headText, workingChanges } from "./git-changes.ts";
import { engineSites, listedKey, unknownLine } from "./possible-callers.ts";
import { confinedPath, location, ToolFailure } from "./results.ts";
import {
  codeOnly,
  type Definition,
  definitionsOf,
  describeChange,
  qualified,
  type SignatureChange,
  signatureChanges,
  supportedSource,
} from "./signatures.ts";
import { answer, cypherRows, type GraphDeps, type GraphSession } from "./tools.ts";

export const IMPACT_DEFAULT_DEPTH = 2;
export const IMPACT_MAX_DEPTH = 4;
/** Enclosing functions of text-found call sites whose own callers are followed, at most. */
const FOLLOW_LIMIT = 50;
/** Functions a walk of callers reaches at most. */
const WALK_LIMIT = 200;

type Row = Record<string, unknown>;

export type Relation = "caller" | "importer" | "subclass" | "overrider";

export interface Dependent {
  relation: Relation;
  /** The depending function, class or file's name. */
  name: string;
  path: string;
  /** The call site (callers at one hop), the import line, or the definition. */
  line: number | undefined;
  /** 1: depends on the change itself; more: through that many links. */
  hops: number;
  /** A caller not confirmed (src/agent/call-confidence.ts, or pi-cgc's own possible callers): why it is listed. */
  possible?: string;
}

export interface Impact {
  path: string;
  change: SignatureChange;
  dependents: Dependent[];
  /** Why pi-cgc's own possible callers are unknown, where they are. */
  unknown?: string;
}

const str = (value: unknown) => (typeof value === "string" ? value : "");
const num = (value: unknown) => (typeof value === "number" ? value : undefined);
const under = (root: string) => `${root.replace(/\/$/, "")}/`;

/** Whether a change can break a dependent: anything but an addition. */
export const breaking = (change: SignatureChange) => change.change !== "added";

/** Whether a change is what the impact note speaks of: a function or method that lost or changed its parameters, or is gone. */
export const noteWorthy = (change: SignatureChange) => change.kind !== "class" && breaking(change);

/** Changed lines of the working tree: a dependent there was edited along with the change. */
export type ChangedLines = ReadonlyMap<string, ReadonlyArray<readonly [number, number]>>;

function inChangedLines(changed: ChangedLines, path: string, line: number | undefined): boolean {
  const ranges = changed.get(path);
  if (!ranges) return false;
  if (line === undefined) return true;
  return ranges.some(([from, to]) => line >= from && line <= to);
}

/** Module names a file is imported by: Python's dotted path, or the file's stem a script's specifier ends with. */
function moduleStem(root: string, path: string): { stem: string; dotted?: string } {
  const rel = relative(root, path).replace(/\\/g, "/");
  const ext = extname(rel);
  const bare = rel.slice(0, rel.length - ext.length);
  if (ext === ".py" || ext === ".pyw") {
    const dotted = bare.replace(/\/__init__$/, "").replace(/\//g, ".");
    return { stem: dotted.split(".").at(-1) ?? dotted, dotted };
  }
  const name = basename(bare);
  return { stem: name === "index" ? basename(dirname(bare)) : name };
}

/** Does `module`, as imported from `importer`, name `target`? */
export function importNames(root: string, importer: string, module: string, target: string): boolean {
  const { dotted } = moduleStem(root, target);
  if (dotted !== undefined) {
    const name = module.replace(/^\.+/, "");
    if (!module.startsWith(".")) return name === dotted;
    // A relative import: resolved from the importer's package.
    const ups = (/^\.+/.exec(module)?.[0].length ?? 1) - 1;
    let base = dirname(relative(root, importer));
    for (let i = 0; i < ups; i++) base = dirname(base);
    const pkg = base === "." ? "" : `${base.replace(/\//g, ".")}.`;
    return `${pkg}${name}`.replace(/\.$/, "") === dotted;
  }
  if (!module.startsWith(".")) return false;
  const resolved = resolve(dirname(importer), module).replace(/\.(ts|tsx|mts|cts|js|jsx|mjs|cjs)$/, "");
  const bare = target.slice(0, target.length - extname(target).length);
  return resolved === bare || (basename(bare) === "index" && resolved === dirname(bare));
}

/** The change's definition as the graph holds it now (params changed) or held it (gone). */
function targetOf(change: SignatureChange): Definition {
  return (change.after ?? change.before) as Definition;
}

interface Query {
  deps: GraphDeps;
  session: GraphSession;
  signal: AbortSignal | undefined;
}

async function rows(q: Query, cypher: string, params: Record<string, unknown>): Promise<Row[]> {
  return cypherRows(q.deps, q.session, cypher, params, q.signal);
}

/** The graph's nodes of a definition: its Function (by name, file and class), or its Class. */
async function nodesOf(q: Query, path: string, definition: Definition): Promise<FunctionKey[]> {
  const isClass = definition.kind === "class";
  const found = await rows(
    q,
    `MATCH (f:${isClass ? "Class" : "Function"}) WHERE f.name = $name AND f.path = $path ` +
      (isClass ? "" : "AND ($owner = '' OR f.class_context = $owner) ") +
      "RETURN f.path AS path, f.line_number AS line ORDER BY path, line",
    { name: definition.name, path, owner: definition.owner ?? "" },
  );
  return found.map((row) => ({ name: definition.name, path: str(row.path), line: Number(row.line) }));
}

/**
 * Direct callers (call sites) of a definition still in the graph: a function, a method, or a class
 * (instantiation); those of a call edge not confirmed are marked possible. `listed`: each call edge's key, for
 * pi-cgc's own possible callers to leave out.
 */
async function graphCallers(
  q: Query,
  path: string,
  definition: Definition,
): Promise<{ callers: Dependent[]; listed: Set<string> }> {
  const isClass = definition.kind === "class";
  const found = await rows(
    q,
    `MATCH (o)-[r:CALLS|HEURISTIC_CALLS]->(f:${isClass ? "Class" : "Function"}) WHERE f.name = $name AND f.path = $path ` +
      (isClass ? "" : "AND ($owner = '' OR f.class_context = $owner) ") +
      "RETURN o.name AS name, o.path AS path, o.line_number AS defined, r.line_number AS line, " +
      "f.line_number AS target_line, type(r) AS type, " +
      "r.confidence_label AS label, r.resolution_tier AS tier, r.full_call_name AS call ORDER BY path, line",
    { name: definition.name, path, owner: definition.owner ?? "" },
  );
  const listed = new Set(
    found.map((row) =>
      listedKey({ path, name: definition.name, line: Number(row.target_line) }, str(row.path), row.line),
    ),
  );
  const edge = (row: Row) =>
    edgeOf(row, str(row.path) === path && str(row.name) === definition.name && row.defined === row.target_line);
  // One dependent per call site: confirmed if any edge there is.
  const sure = new Set(
    found.filter((row) => isConfirmedCall(edge(row))).map((row) => `${str(row.path)}\0${num(row.line)}`),
  );
  const callers = found
    .filter((row) => isConfirmedCall(edge(row)) || !sure.has(`${str(row.path)}\0${num(row.line)}`))
    .map((row) => ({
      relation: "caller" as const,
      name: str(row.name),
      path: str(row.path),
      line: num(row.line),
      hops: 1,
      possible: isConfirmedCall(edge(row)) ? undefined : possibleCallWhy(edge(row)),
    }));
  return { callers, listed };
}

/** pi-cgc's own possible callers of a function still in the graph (calls the graph does not link), or why unknown. */
async function engineCallers(
  q: Query,
  path: string,
  definition: Definition,
  listed: ReadonlySet<string>,
): Promise<{ callers: Dependent[]; unknown?: string }> {
  const targets = await nodesOf(q, path, definition);
  const answer = await engineSites(q.deps.possibleCallers, targets, listed, q.signal);
  if ("unknown" in answer) return { callers: [], unknown: answer.unknown };
  return {
    callers: answer.sites.map((site) => ({
      relation: "caller",
      name: site.caller,
      path: site.path,
      line: site.line,
      hops: 1,
      possible: site.why,
    })),
  };
}

/**
 * Functions reaching `name` in `path` in 2..depth calls (the first hop is the direct callers, listed apart); one
 * reached only through a call not confirmed is marked possible.
 */
async function transitiveCallers(q: Query, path: string, definition: Definition, depth: number): Promise<Dependent[]> {
  if (depth < 2) return [];
  const walk = await reachCalls(
    (cypher, params) => rows(q, cypher, params),
    await nodesOf(q, path, definition),
    "callers",
    depth,
    WALK_LIMIT,
    definition.kind === "class" ? "Class" : "Function",
  );
  return walk.reached
    .filter((fn) => fn.hops >= 2)
    .map((fn) => ({
      relation: "caller",
      name: fn.name,
      path: fn.path,
      line: fn.line,
      hops: fn.hops,
      possible: fn.possible === undefined ? undefined : `through ${fn.possible}`,
    }));
}

async function subclasses(q: Query, path: string, name: string, depth: number): Promise<Dependent[]> {
  const found = await rows(
    q,
    `MATCH p = (s:Class)-[:INHERITS*1..${depth}]->(c:Class) WHERE c.name = $name AND c.path = $path ` +
      "RETURN s.name AS name, s.path AS path, s.line_number AS line, min(length(p)) AS hops ORDER BY hops, path, line",
    { name, path },
  );
  return found.map((row) => ({
    relation: "subclass",
    name: str(row.name),
    path: str(row.path),
    line: num(row.line),
    hops: Number(row.hops),
  }));
}

async function overriders(q: Query, path: string, definition: Definition, depth: number): Promise<Dependent[]> {
  if (!definition.owner) return [];
  const found = await rows(
    q,
    `MATCH p = (s:Class)-[:INHERITS*1..${depth}]->(c:Class) WHERE c.name = $owner AND c.path = $path ` +
      "WITH s, min(length(p)) AS hops MATCH (s)-[:CONTAINS]->(m:Function) WHERE m.name = $name " +
      "RETURN s.name AS owner, m.path AS path, m.line_number AS line, hops ORDER BY hops, path, line",
    { owner: definition.owner, name: definition.name, path },
  );
  return found.map((row) => ({
    relation: "overrider",
    name: `${str(row.owner)}.${definition.name}`,
    path: str(row.path),
    line: num(row.line),
    hops: Number(row.hops),
  }));
}

/** Files importing `path`'s module (or a name from it), with the import's line and the name imported. */
async function importersOf(q: Query, path: string): Promise<Array<{ path: string; line?: number; imported: string }>> {
  const { stem, dotted } = moduleStem(q.session.root, path);
  const found = await rows(
    q,
    "MATCH (file:File)-[r:IMPORTS]->(m:Module) WHERE file.path STARTS WITH $root " +
      "AND (m.name = $stem OR m.name ENDS WITH $dotStem OR m.name ENDS WITH $slashStem OR m.name = $dotted) " +
      "RETURN file.path AS path, m.name AS module, r.imported_name AS imported, r.line_number AS line",
    { root: under(q.session.root), stem, dotStem: `.${stem}`, slashStem: `/${stem}`, dotted: dotted ?? stem },
  );
  return found
    .filter((row) => str(row.path) !== path && importNames(q.session.root, str(row.path), str(row.module), path))
    .map((row) => ({ path: str(row.path), line: num(row.line), imported: str(row.imported) }));
}

/** Call sites of `name` in a file's code (strings and comments left out), other than its own definitions. */
export function callSitesIn(path: string, text: string, name: string, method: boolean): number[] {
  const code = codeOnly(path, text);
  const escaped = name.replace(/[$]/g, "\\$");
  const call = new RegExp(`${method ? "\\." : "(?<![\\w$])"}${escaped}\\s*\\(`, "g");
  const definition = new RegExp(`\\b(def|function|class)\\s+${escaped}\\b`);
  const lines: number[] = [];
  const codeLines = code.split("\n");
  for (const [index, line] of codeLines.entries()) {
    call.lastIndex = 0;
    if (call.test(line) && !definition.test(line)) lines.push(index + 1);
  }
  return lines;
}

/** The innermost graph function around each line of a file, or `<module>`. */
async function enclosing(
  q: Query,
  paths: string[],
): Promise<(path: string, line: number) => { name: string; line?: number }> {
  if (paths.length === 0) return () => ({ name: "<module>" });
  const found = await rows(
    q,
    "MATCH (f:Function) WHERE f.path IN $paths RETURN f.name AS name, f.path AS path, f.line_number AS line, f.end_line AS last",
    { paths },
  );
  return (path, line) => {
    let best: Row | undefined;
    for (const row of found) {
      if (row.path !== path || str(row.name) === "<module>") continue;
      const from = num(row.line) ?? 0;
      const to = num(row.last) ?? from;
      if (line >= from && line <= to && (!best || from >= (num(best.line) ?? 0))) best = row;
    }
    return best ? { name: str(best.name), line: num(best.line) } : { name: "<module>" };
  };
}

/** Callers of a definition that is gone: calls of its old name in the files that import it or its module. */
async function callersOfGone(q: Query, path: string, definition: Definition, depth: number): Promise<Dependent[]> {
  const ownerOrName = definition.owner ?? definition.name;
  const importers = await importersOf(q, path);
  // A file importing a name from the module uses that name; one importing the module itself may use any.
  const files = [
    ...new Set(
      importers
        .filter(
          (entry) =>
            entry.imported === "" || entry.imported === ownerOrName || entry.imported === "*" || !definition.owner,
        )
        .map((entry) => entry.path),
    ),
  ].sort();
  const sites: Array<{ path: string; line: number }> = [];
  for (const file of files) {
    let text: string;
    try {
      text = readFileSync(file, "utf8");
    } catch {
      continue; // gone from the disk: nothing there calls anything
    }
    for (const line of callSitesIn(file, text, definition.name, definition.kind === "method"))
      sites.push({ path: file, line });
  }
  const around = await enclosing(q, [...new Set(sites.map((site) => site.path))]);
  // A method's call is `.name(` on an object whose type the text does not say: only possible.
  const why =
    definition.kind === "method"
      ? `a call of .${definition.name}() in a file that imports ${ownerOrName}'s module; the object's type is unknown`
      : undefined;
  const direct: Dependent[] = sites.map((site) => ({
    relation: "caller",
    name: around(site.path, site.line).name,
    path: site.path,
    line: site.line,
    hops: 1,
    possible: why,
  }));
  if (depth < 2) return direct;
  const further: Dependent[] = [];
  const followed = new Set<string>();
  for (const site of sites) {
    const fn = around(site.path, site.line);
    const key = `${site.path}\0${fn.name}`;
    if (fn.name === "<module>" || followed.has(key) || followed.size >= FOLLOW_LIMIT) continue;
    followed.add(key);
    const deeper = await transitiveCallers(
      q,
      site.path,
      { kind: "function", name: fn.name, params: "", line: fn.line ?? 0 },
      depth,
    );
    const first = await graphCallers(q, site.path, { kind: "function", name: fn.name, params: "", line: 0 });
    const through = why === undefined ? undefined : `through ${fn.name} → ${definition.name}: ${why}`;
    for (const dependent of [
      ...first.callers.map((d) => ({ ...d, hops: 2 })),
      ...deeper.map((d) => ({ ...d, hops: d.hops + 1 })),
    ])
      if (dependent.hops <= depth) further.push({ ...dependent, possible: dependent.possible ?? through });
  }
  return [...direct, ...further];
}

/** Everything that depends on one change, to `depth` links, outside the changed lines; first-hop callers only when `callersOnly`. */
export async function dependentsOf(
  q: Query,
  path: string,
  change: SignatureChange,
  depth: number,
  changed: ChangedLines,
  callersOnly = false,
): Promise<Dependent[]> {
  return (await dependencies(q, path, change, depth, changed, callersOnly)).dependents;
}

/**
 * dependentsOf, and why pi-cgc's own possible callers are unknown where they are (the engine does not run, or
 * failed): then the dependents are the graph's alone.
 */
export async function dependencies(
  q: Query,
  path: string,
  change: SignatureChange,
  depth: number,
  changed: ChangedLines,
  callersOnly = false,
): Promise<{ dependents: Dependent[]; unknown?: string }> {
  if (!breaking(change)) return { dependents: [] };
  const definition = targetOf(change);
  const gone = change.change !== "params";
  const found: Dependent[] = [];
  let unknown: string | undefined;
  const isConstructor =
    definition.kind === "method" && (definition.name === "__init__" || definition.name === "constructor");
  if (gone) found.push(...(await callersOfGone(q, path, change.before as Definition, callersOnly ? 1 : depth)));
  else {
    const graph = await graphCallers(q, path, definition);
    found.push(...graph.callers);
    if (definition.kind !== "class") {
      const engine = await engineCallers(q, path, definition, graph.listed);
      found.push(...engine.callers);
      unknown = engine.unknown;
    }
    if (isConstructor && definition.owner)
      found.push(
        ...(await graphCallers(q, path, { kind: "class", name: definition.owner, params: "", line: 0 })).callers,
      );
    if (!callersOnly) found.push(...(await transitiveCallers(q, path, definition, depth)));
  }
  if (!callersOnly) {
    if (definition.kind === "class") {
      const name = (change.before ?? definition).name;
      found.push(...(await subclasses(q, path, name, depth)));
      const importers = await importersOf(q, path);
      for (const entry of importers)
        if (entry.imported === name)
          found.push({ relation: "importer", name: basename(entry.path), path: entry.path, line: entry.line, hops: 1 });
    } else if (definition.kind === "method") {
      found.push(...(await overriders(q, path, change.before ?? definition, depth)));
    }
  }
  const seen = new Set<string>();
  const dependents = found.filter((dependent) => {
    const key = `${dependent.relation}\0${dependent.path}\0${dependent.line}\0${dependent.name}`;
    if (seen.has(key) || inChangedLines(changed, dependent.path, dependent.line)) return false;
    // The changed definition itself (a recursive call, its own class) is not its dependent.
    if (dependent.path === path && dependent.name === definition.name && dependent.line === definition.line)
      return false;
    seen.add(key);
    return true;
  });
  return { dependents, unknown };
}

/** The changed definitions of one file, old text against new. */
export function fileChanges(path: string, before: string | undefined, after: string | undefined): SignatureChange[] {
  return signatureChanges(definitionsOf(path, before ?? ""), definitionsOf(path, after ?? ""));
}

function readText(path: string): string | undefined {
  try {
    return readFileSync(path, "utf8");
  } catch {
    return undefined;
  }
}

// ---------------------------------------------------------------------------------------------------
// The tool

interface ImpactParams {
  target?: string;
  depth?: number;
}

const RELATION_HEADINGS: Record<Relation, string> = {
  caller: "callers",
  importer: "importers",
  subclass: "subclasses",
  overrider: "overriders",
};

function renderImpacts(ctx: ExtensionContext, impacts: Impact[], edited: ReadonlySet<string>, depth: number): string[] {
  const lines: string[] = [];
  for (const { path, change, dependents, unknown } of impacts) {
    const at = location(ctx.cwd, path, targetOf(change).line);
    lines.push("", `${at}  ${describeChange(change)}`);
    if (!breaking(change)) {
      lines.push("  new: nothing depends on it yet.");
      continue;
    }
    if (dependents.length === 0) {
      lines.push(
        unknown === undefined
          ? `  nothing outside the changed lines depends on it (within ${count(depth, "link")}).`
          : `  the graph links nothing outside the changed lines to it (within ${count(depth, "link")}); possible callers unknown (below).`,
      );
      continue;
    }
    const listing = (dependent: Dependent, relation: Relation) => {
      const hops =
        dependent.hops > 1 ? `  (${count(dependent.hops, relation === "caller" ? "call" : "link")} away)` : "";
      const mark = edited.has(dependent.path) ? "  [edited in this session]" : "";
      const possible = dependent.possible === undefined ? "" : `  [possible: ${dependent.possible}]`;
      return `  - ${location(ctx.cwd, dependent.path, dependent.line)}  ${dependent.name}${hops}${mark}${possible}`;
    };
    for (const relation of ["caller", "importer", "subclass", "overrider"] as const) {
      const group = dependents.filter((dependent) => dependent.relation === relation).sort((a, b) => a.hops - b.hops);
      const sure = group.filter((dependent) => dependent.possible === undefined);
      if (sure.length > 0) lines.push(`  ${RELATION_HEADINGS[relation]} (${sure.length}):`);
      for (const dependent of sure) lines.push(listing(dependent, relation));
      const loose = group.filter((dependent) => dependent.possible !== undefined);
      if (loose.length === 0) continue;
      lines.push(`  possible ${RELATION_HEADINGS[relation]} (${loose.length}; not confirmed, each says why):`);
      for (const dependent of loose) lines.push(listing(dependent, relation));
    }
  }
  const unknown = impacts.find((impact) => impact.unknown !== undefined)?.unknown;
  if (unknown !== undefined) lines.push("", unknownLine(unknown));
  return lines;
}

/** What the tool needs besides the graph deps: the files edited in this session. */
export interface ImpactDeps extends GraphDeps {
  edited(): ReadonlySet<string>;
}

export function impactTool(deps: ImpactDeps) {
  return defineTool({
    name: IMPACT_TOOL_NAME,
    label: "cgc impact",
    description:
      "What the uncommitted changes of the working tree can break, from git's diff against HEAD and the code graph: each function, class or method added, removed, renamed or with another parameter list, and its callers, importers, subclasses and overriders outside the changed lines, to a depth, as path:line (possible callers apart, each marked with why; those in files edited in this session are marked). Use it before finishing a change that touches a signature.",
    parameters: Type.Object({
      target: Type.Optional(
        Type.String({
          description: "Only this symbol (function, class or method name) or this file (a path in the workspace)",
        }),
      ),
      depth: Type.Optional(
        Type.Integer({
          minimum: 1,
          maximum: IMPACT_MAX_DEPTH,
          description: `How many links of callers and subclasses to follow (default ${IMPACT_DEFAULT_DEPTH}, at most ${IMPACT_MAX_DEPTH})`,
        }),
      ),
    }),
    async execute(_id, params: ImpactParams, signal, _update, ctx) {
      return answer(deps, signal, async (session) => {
        const depth = params.depth ?? IMPACT_DEFAULT_DEPTH;
        const q: Query = { deps, session, signal };
        const changes = await workingChanges(session.root, signal);
        if (!changes.ok) {
          throw new ToolFailure(
            "UNAVAILABLE",
            `cannot compare the working tree with HEAD: ${changes.reason}`,
            "cgc_impact needs a git repository with a commit; for one function's callers use cgc_relations.",
          );
        }
        let files = changes.value.filter(
          (file) => supportedSource(file.path) && file.path.startsWith(under(session.root)),
        );
        let symbol: string | undefined;
        const target = params.target?.replace(/^@/, "").trim();
        if (target) {
          const asFile = /[/\\]/.test(target) || supportedSource(target);
          if (asFile) {
            const confined = confinedPath(ctx.cwd, target, [session.root]);
            if (confined instanceof ToolFailure) throw confined;
            files = files.filter((file) => file.path === confined);
            if (files.length === 0)
              return `${location(ctx.cwd, confined, undefined)} has no uncommitted change to a definition cgc_impact reads (Python, TypeScript, JavaScript).`;
          } else symbol = target;
        }
        const changed: ChangedLines = new Map(
          changes.value.map((file) => [
            file.path,
            file.status === "deleted" ? [[1, Number.MAX_SAFE_INTEGER] as const] : file.lines,
          ]),
        );
        const impacts: Impact[] = [];
        for (const file of files) {
          const before = file.status === "added" ? "" : await headText(session.root, file.path, signal);
          const after = file.status === "deleted" ? "" : readText(file.path);
          for (const change of fileChanges(file.path, before, after)) {
            if (symbol && ![change.name, change.from, qualified(change)].includes(symbol)) continue;
            impacts.push({ path: file.path, change, ...(await dependencies(q, file.path, change, depth, changed)) });
          }
        }
        if (impacts.length === 0) return nothingChanged(q, ctx, symbol, files);
        const breakingCount = impacts.filter((impact) => breaking(impact.change)).length;
        const all = impacts.flatMap((impact) => impact.dependents);
        const possible = all.filter((dependent) => dependent.possible !== undefined).length;
        const fileCount = new Set(impacts.map((impact) => impact.path)).size;
        const dependents =
          count(all.length - possible, "dependent") +
          (possible > 0 ? ` and ${count(possible, "possible caller")}` : "");
        return [
          `${count(impacts.length, "changed definition")} in ${count(fileCount, "file")} against HEAD` +
            ` (${breakingCount} that can break callers; ${dependents} within ${count(depth, "link")}):`,
          ...renderImpacts(ctx, impacts, deps.edited(), depth),
        ].join("\n");
      });
    },
  });
}

/** No changed definition matched: why, and for an unknown symbol, NOT_FOUND. */
async function nothingChanged(
  q: Query,
  ctx: ExtensionContext,
  symbol: string | undefined,
  files: ChangedFile[],
): Promise<string> {
  if (!symbol) {
    return files.length === 0
      ? "No uncommitted change to Python, TypeScript or JavaScript files against HEAD."
      : `No definition was added, removed, renamed or given other parameters in ${count(files.length, "changed file")} (${files
          .slice(0, 5)
          .map((file) => location(ctx.cwd, file.path, undefined))
          .join(", ")}${files.length > 5 ? ", …" : ""}): edits inside bodies change no signature.`;
  }
  const known = await rows(
    q,
    "OPTIONAL MATCH (f:Function) WHERE f.name = $name AND f.path STARTS WITH $root WITH count(f) AS functions " +
      "OPTIONAL MATCH (c:Class) WHERE c.name = $name AND c.path STARTS WITH $root RETURN functions, count(c) AS classes",
    { name: symbol, root: under(q.session.root) },
  );
  const row = known[0] ?? {};
  if (Number(row.functions ?? 0) + Number(row.classes ?? 0) === 0) {
    throw new ToolFailure(
      "NOT_FOUND",
      `no function, class or method named "${symbol}" in the graph of ${q.session.root}, and no uncommitted change to one`,
      "check the spelling with cgc_find, or call cgc_impact without a target to see every change.",
    );
  }
  return `${symbol} has no uncommitted change to its name or parameters against HEAD; for its callers as they are, use cgc_relations.`;
}
