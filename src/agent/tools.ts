// The graph tools pi-cgc gives the agent when the session carries no CGC MCP tools (ADR 0006). Each
// answers one kind of question through a pi-cgc-owned `cgc mcp start` lease (src/agent/mcp.ts): cgc's own
// catalog handlers where they are right, read-only Cypher where 0.6.13's are not (transitive callers fail
// on Kùzu, call chains miss direct calls). Results name `path:line` for read; every text goes through
// the output policy; failures come back as a code with a one-line remedy.
import { relative } from "node:path";
import { StringEnum } from "@mariozechner/pi-ai";
import {
  type AgentToolResult,
  defineTool,
  type ExtensionContext,
  type ToolDefinition,
} from "@mariozechner/pi-coding-agent";
import { Type } from "typebox";
import type { CgcSession } from "../lifecycle/session.ts";
import { isReady } from "../state/model.ts";
import { count } from "../state/words.ts";
import { isConfirmedCall, possibleCallRank, possibleCallWhy } from "./call-confidence.ts";
import { edgeOf as callEdge, chainsOf, type FunctionKey, type Reached, reachCalls } from "./call-reach.ts";
import { GRAPH_TOOL_NAMES, type Intent } from "./catalog.ts";
import { checkReadOnlyCypher } from "./cypher.ts";
import type { McpLease } from "./mcp.ts";
import {
  callerName,
  engineSites,
  listedKey,
  type PossibleCallers,
  type PossibleTarget,
  unknownLine,
} from "./possible-callers.ts";
import { answered, confinedPath, failureOf, liveSession, location, type ToolDetails, ToolFailure } from "./results.ts";

/** What the graph tools use of a session. */
export type GraphSession = Pick<
  CgcSession,
  "root" | "store" | "runner" | "worktree" | "config" | "present" | "maintenanceRunning" | "refresh"
>;

export interface GraphDeps {
  current(): GraphSession | undefined;
  lease(session: GraphSession): McpLease;
  /** Waits (bounded) for a pending engine update; the changed paths the graph does not hold yet. */
  settle(signal?: AbortSignal): Promise<string[]>;
  /** Each target function's possible call sites from pi-cgc's engine, or why they are unknown. */
  possibleCallers: PossibleCallers;
}

type Row = Record<string, unknown>;

/** The session if its graph can answer now, or the reason it cannot. */
function readySession(session: GraphSession): GraphSession {
  const state = session.store.get();
  if (state.readiness === "busy") throw failureOf("BUSY", state.reason);
  // pi-cgc's own index or sync holds the database; a query would only wait out cgc's lock retries.
  if (session.maintenanceRunning) {
    throw failureOf("BUSY", `pi-cgc is ${state.activity === "idle" ? "updating" : state.activity} the graph`);
  }
  if (!isReady(state)) {
    throw new ToolFailure(
      "UNAVAILABLE",
      `the code graph is not ready (${state.readiness}: ${state.reason})`,
      "use grep and read; the user can run /cgc status or /cgc index.",
    );
  }
  return session;
}

/** One catalog tool call; a transport or tool failure becomes a ToolFailure. */
async function catalog(
  deps: GraphDeps,
  session: GraphSession,
  name: string,
  args: Record<string, unknown>,
  signal: AbortSignal | undefined,
): Promise<Row> {
  const outcome = await deps.lease(session).call(name, args, signal);
  if (!outcome.ok) {
    if (outcome.toolError && /read-only/i.test(outcome.reason)) {
      throw new ToolFailure("NOT_ALLOWED", outcome.reason, "write a query that only reads (MATCH … RETURN).");
    }
    throw failureOf(outcome.code === "OK" ? "FAILED" : outcome.code, outcome.reason);
  }
  const value = outcome.value;
  if (typeof value !== "object" || value === null) throw failureOf("FAILED", `cgc answered ${String(value)}`);
  const inner = (value as Row).results;
  const error =
    (value as Row).error ?? (typeof inner === "object" && inner !== null ? (inner as Row).error : undefined);
  if (typeof error === "string") throw failureOf("FAILED", error);
  return value as Row;
}

/** Read-only Cypher with parameters; returns the rows. */
export async function cypherRows(
  deps: GraphDeps,
  session: GraphSession,
  query: string,
  params: Record<string, unknown>,
  signal: AbortSignal | undefined,
): Promise<Row[]> {
  const verdict = checkReadOnlyCypher(query);
  if (!verdict.readOnly) {
    throw new ToolFailure("NOT_ALLOWED", `not a read-only query: ${verdict.reason}`, "write a query that only reads.");
  }
  const value = await catalog(deps, session, "execute_cypher_query", { cypher_query: query, params }, signal);
  return Array.isArray(value.results) ? (value.results as Row[]) : [];
}

/** Runs a tool body with the session; failures become error results with their code and remedy. */
export async function answer(
  deps: GraphDeps,
  signal: AbortSignal | undefined,
  body: (session: GraphSession) => Promise<string>,
): Promise<AgentToolResult<ToolDetails>> {
  const session = liveSession(deps.current);
  return answered(session, async () => {
    // An edit the agent just made reaches the graph before the graph answers, or the answer says so.
    const pending = await deps.settle(signal);
    const text = await body(readySession(session));
    return pending.length > 0 ? `${text}\n\n${pendingNote(session.root, pending)}` : text;
  });
}

/** Names the files whose changes the answer cannot include yet. */
function pendingNote(root: string, paths: string[]): string {
  const shown = paths.slice(0, 10).map((path) => relative(root, path) || path);
  const more = paths.length > shown.length ? ` and ${paths.length - shown.length} more` : "";
  return `Not in this answer yet (a graph update is still running): changes to ${shown.join(", ")}${more}.`;
}

const text = (value: unknown) => (typeof value === "string" ? value : "");
const under = (root: string) => `${root.replace(/\/$/, "")}/`;

// ---------------------------------------------------------------------------------------------------
// Find

function findTool(deps: GraphDeps) {
  return defineTool({
    name: GRAPH_TOOL_NAMES.find,
    label: "cgc find",
    description:
      "Find where a function, class or variable is defined in this workspace's code graph (by name, then by content). Returns kind, name and path:line.",
    parameters: Type.Object({
      query: Type.String({ description: "A symbol name or a word from the code" }),
      fuzzy: Type.Optional(Type.Boolean({ description: "Also match names within two typos (default false)" })),
    }),
    async execute(_id, params, signal, _update, ctx) {
      return answer(deps, signal, async (session) => {
        const value = await catalog(
          deps,
          session,
          "find_code",
          { query: params.query, fuzzy_search: params.fuzzy === true, repo_path: session.root },
          signal,
        );
        const results = (value.results ?? {}) as Record<string, Row[] | undefined>;
        const lines: string[] = [];
        const add = (kind: string, rows: Row[] | undefined) => {
          for (const row of rows ?? []) {
            const name = text(row.name) || "?";
            if (name === "<module>") continue; // a whole-file pseudo function: the path alone says it
            lines.push(`${kind} ${name}  ${location(ctx.cwd, row.path, row.line_number)}`);
          }
        };
        add("function", results.functions_by_name);
        add("class", results.classes_by_name);
        add("variable", results.variables_by_name);
        const byName = lines.length;
        const contentFiles = new Set<string>();
        for (const row of results.content_matches ?? []) {
          const where = location(ctx.cwd, row.path, row.name === "<module>" ? undefined : row.line_number);
          if (contentFiles.has(where)) continue;
          contentFiles.add(where);
          lines.push(`mentions  ${row.name === "<module>" ? where : `${text(row.name)}  ${where}`}`);
        }
        if (lines.length === 0) {
          throw new ToolFailure(
            "NOT_FOUND",
            `nothing named or mentioning "${params.query}" in the graph`,
            "try fuzzy: true, or grep for the text.",
          );
        }
        return [`${count(byName, "definition")} for "${params.query}":`, ...lines].join("\n");
      });
    },
  });
}

// ---------------------------------------------------------------------------------------------------
// Relations

const RELATIONS = [
  "callers",
  "callees",
  "callers_transitive",
  "callees_transitive",
  "call_chain",
  "importers",
  "class_hierarchy",
  "overrides",
] as const;
type Relation = (typeof RELATIONS)[number];

interface RelationParams {
  relation: Relation;
  target: string;
  to?: string;
  depth?: number;
  file?: string;
}

/** NOT_FOUND unless some function or class of that name is in this workspace's graph. */
async function requireSymbol(
  deps: GraphDeps,
  session: GraphSession,
  name: string,
  file: string | undefined,
  signal: AbortSignal | undefined,
): Promise<void> {
  const rows = await cypherRows(
    deps,
    session,
    "OPTIONAL MATCH (f:Function) WHERE f.name = $name AND f.path STARTS WITH $root AND ($file = '' OR f.path = $file) " +
      "WITH count(f) AS functions " +
      "OPTIONAL MATCH (c:Class) WHERE c.name = $name AND c.path STARTS WITH $root AND ($file = '' OR c.path = $file) " +
      "RETURN functions, count(c) AS classes",
    { name, root: under(session.root), file: file ?? "" },
    signal,
  );
  const row = rows[0] ?? {};
  if (Number(row.functions ?? 0) + Number(row.classes ?? 0) === 0) {
    throw new ToolFailure(
      "NOT_FOUND",
      `no function or class named "${name}"${file ? ` in ${file}` : ""} in the graph of ${session.root}`,
      "check the spelling with cgc_find; for text, use grep.",
    );
  }
}

/** How many possible callers (or callees) a relations answer lists before "N more". */
const POSSIBLE_SHOWN = 10;
/** Functions a transitive answer lists at most. */
const TRANSITIVE_LIMIT = 200;
/** Functions a call-chain walk visits at most. */
const CHAIN_WALK_LIMIT = 2_000;

/** The Function nodes a relations question is about: its name, in this workspace (or the file given). */
async function functionsNamed(
  deps: GraphDeps,
  session: GraphSession,
  name: string,
  file: string | undefined,
  signal: AbortSignal | undefined,
): Promise<PossibleTarget[]> {
  const rows = await cypherRows(
    deps,
    session,
    "MATCH (f:Function) WHERE f.name = $name AND f.path STARTS WITH $root AND ($file = '' OR f.path = $file) " +
      "RETURN f.path AS path, f.line_number AS line ORDER BY path, line",
    { name, root: under(session.root), file: file ?? "" },
    signal,
  );
  return rows.map((row) => ({ path: text(row.path), name, line: Number(row.line) }));
}

/** A capped list: the first POSSIBLE_SHOWN lines, then how many more. */
function capped(lines: string[]): string[] {
  const shown = lines.slice(0, POSSIBLE_SHOWN);
  if (lines.length > shown.length) shown.push(`… ${lines.length - shown.length} more possible`);
  return shown;
}

async function directCalls(
  deps: GraphDeps,
  session: GraphSession,
  ctx: ExtensionContext,
  params: RelationParams,
  file: string | undefined,
  signal: AbortSignal | undefined,
): Promise<string> {
  const callers = params.relation === "callers";
  // Both of cgc's call edges; src/agent/call-confidence.ts splits them into confirmed and possible.
  const edge = callers
    ? "(f:Function)<-[r:CALLS|HEURISTIC_CALLS]-(o:Function)"
    : "(f:Function)-[r:CALLS|HEURISTIC_CALLS]->(o:Function)";
  const query =
    `MATCH ${edge} WHERE f.name = $name AND f.path STARTS WITH $root AND ($file = '' OR f.path = $file) ` +
    "RETURN o.name AS name, o.path AS path, o.line_number AS defined, r.line_number AS call_line, " +
    "f.path AS target_path, f.line_number AS target_line, type(r) AS type, r.confidence_label AS label, " +
    "r.resolution_tier AS tier, r.full_call_name AS call " +
    (callers ? "ORDER BY path, call_line" : "ORDER BY call_line, name");
  const rows = await cypherRows(
    deps,
    session,
    query,
    { name: params.target, root: under(session.root), file: file ?? "" },
    signal,
  );
  // Callers only: pi-cgc's own possible callers of every function the question names, but for the calls the
  // graph already links to it.
  const targets = callers ? await functionsNamed(deps, session, params.target, file, signal) : [];
  const listed = new Set(
    rows.map((row) =>
      listedKey(
        { path: text(row.target_path), name: params.target, line: Number(row.target_line) },
        text(row.path),
        row.call_line,
      ),
    ),
  );
  const engine = await engineSites(deps.possibleCallers, targets, listed, signal);
  const engineFound = "sites" in engine ? engine.sites : [];
  const unknown = "unknown" in engine ? engine.unknown : undefined;
  if (rows.length === 0 && engineFound.length === 0) {
    if (targets.length === 0) await requireSymbol(deps, session, params.target, file, signal);
    if (!callers) return `No calls from ${params.target} in the graph.`;
    if (unknown !== undefined && targets.length > 0)
      return `The graph links no callers of ${params.target}.\n${unknownLine(unknown)}`;
    return targets.length > 0
      ? `No callers of ${params.target}: none in the graph, and no call of that name that pi-cgc could not rule out.`
      : `No callers of ${params.target} in the graph.`;
  }
  const lineOf = (row: Row) =>
    callers
      ? `- ${text(row.name)}  ${location(ctx.cwd, row.path, row.call_line)}  (calls ${params.target}; ${text(row.name)} defined at line ${row.defined})`
      : `- ${text(row.name)}  ${location(ctx.cwd, row.path, row.defined)}  (called at ${location(ctx.cwd, row.target_path, row.call_line)})`;
  const functionOf = (row: Row) => `${text(row.name)}\0${text(row.path)}\0${text(row.defined)}`;
  const edgeOf = (row: Row) =>
    callEdge(row, text(row.path) === text(row.target_path) && Number(row.defined) === Number(row.target_line));
  const confirmedRows = rows.filter((row) => isConfirmedCall(edgeOf(row)));
  const seen = new Set<string>();
  const lines: string[] = [];
  // One line per call site; the heading counts functions and call sites apart (one caller may call twice).
  const functions = new Set<string>();
  for (const row of confirmedRows) {
    functions.add(functionOf(row));
    const line = lineOf(row);
    if (seen.has(line)) continue;
    seen.add(line);
    lines.push(line);
  }
  // The rest: cgc's guesses, ranked INFERRED before AMBIGUOUS, then by path and line, each marked with why.
  const possibleRows = rows
    .filter((row) => !isConfirmedCall(edgeOf(row)))
    .sort(
      (a, b) =>
        possibleCallRank(a.label) - possibleCallRank(b.label) ||
        text(a.path).localeCompare(text(b.path)) ||
        Number(a.call_line) - Number(b.call_line),
    );
  const possibleLines: string[] = [];
  const possibleFunctions = new Set<string>();
  for (const row of possibleRows) {
    const line = lineOf(row);
    if (seen.has(line)) continue;
    seen.add(line);
    possibleFunctions.add(functionOf(row));
    possibleLines.push(`${line}  [possible: ${possibleCallWhy(edgeOf(row))}]`);
  }
  // Then pi-cgc's own: calls the graph does not link, strongest rank first.
  for (const site of engineFound) {
    const where = location(ctx.cwd, site.path, site.line);
    const line =
      site.caller === "<module>"
        ? `- ${callerName(site)}  ${where}  (calls ${params.target})`
        : `- ${site.caller}  ${where}  (calls ${params.target}; ${site.caller} defined at line ${site.callerLine})`;
    if (seen.has(line)) continue;
    seen.add(line);
    possibleFunctions.add(`${site.caller}\0${site.path}\0${site.callerLine}`);
    possibleLines.push(`${line}  [possible: ${site.why}]`);
  }
  const shown = capped(possibleLines);
  const what = callers ? "possible caller" : "possible callee";
  const notConfirmed = callers
    ? "not confirmed: cgc linked these by name or by inference, or pi-cgc could not rule the call out; each says why"
    : "not confirmed: cgc linked these by name or by inference, not by an import or a definition; each says why";
  const unknownNote = unknown === undefined ? [] : ["", unknownLine(unknown)];
  if (lines.length === 0) {
    const where = callers ? "path:line is the call site" : "path:line is the definition";
    return [
      `No confirmed ${callers ? "callers of" : "calls from"} ${params.target}; ${possibleFunctions.size} possible (${notConfirmed}; ${where}):`,
      ...shown,
      ...unknownNote,
    ].join("\n");
  }
  const sites = lines.length === functions.size ? "" : ` at ${lines.length} call sites`;
  const heading = callers
    ? `${count(functions.size, "caller")} of ${params.target}${sites} (path:line is the call site):`
    : `${params.target} calls ${count(functions.size, "function")}${sites} (path:line is the definition):`;
  const possible =
    shown.length === 0 ? [] : ["", `${count(possibleFunctions.size, what)} (${notConfirmed}):`, ...shown];
  return [heading, ...lines, ...possible, ...unknownNote].join("\n");
}

/** Where a transitive answer's own possible callers come from: not from the walk. */
const ENGINE_NOT_FOLLOWED =
  "Only the graph's calls are followed here: pi-cgc's own possible callers (calls the graph does not link) are not; ask relation callers of a function for them.";

async function transitiveCalls(
  deps: GraphDeps,
  session: GraphSession,
  ctx: ExtensionContext,
  params: RelationParams,
  file: string | undefined,
  signal: AbortSignal | undefined,
): Promise<string> {
  const depth = params.depth ?? 3;
  const callers = params.relation === "callers_transitive";
  const seeds = await functionsNamed(deps, session, params.target, file, signal);
  if (seeds.length === 0) await requireSymbol(deps, session, params.target, file, signal);
  const walk = await reachCalls(
    (query, values) => cypherRows(deps, session, query, values, signal),
    seeds,
    callers ? "callers" : "callees",
    depth,
    TRANSITIVE_LIMIT,
  );
  const note = callers ? ["", ENGINE_NOT_FOLLOWED] : [];
  const sure = walk.reached.filter((fn) => fn.possible === undefined).slice(0, TRANSITIVE_LIMIT);
  const loose = walk.reached.filter((fn) => fn.possible !== undefined);
  const stopped = walk.truncated
    ? [`(The walk stopped at ${TRANSITIVE_LIMIT} functions; ask with a smaller depth.)`]
    : [];
  if (walk.reached.length === 0) {
    return [
      `No ${callers ? "callers of" : "calls from"} ${params.target} in the graph within ${count(depth, "hop")}.`,
      ...note,
    ].join("\n");
  }
  const lineOf = (fn: Reached) => `- ${fn.name}  ${location(ctx.cwd, fn.path, fn.line)}  (${count(fn.hops, "hop")})`;
  const possibleLines = loose.map((fn) => `${lineOf(fn)}  [possible: through ${fn.possible}]`);
  const looseHeading = `${count(loose.length, "function")} ${callers ? `${loose.length === 1 ? "reaches" : "reach"} ${params.target}` : `${loose.length === 1 ? "is" : "are"} reached`} only through a possible call (not confirmed; each names the call and why):`;
  if (sure.length === 0) {
    return [
      `No function ${callers ? `reaches ${params.target}` : `is reached from ${params.target}`} through confirmed calls within ${count(depth, "call")}; ${looseHeading}`,
      ...capped(possibleLines),
      ...stopped,
      ...note,
    ].join("\n");
  }
  const one = sure.length === 1;
  const what = callers
    ? `${one ? "reaches" : "reach"} ${params.target}`
    : `${one ? "is" : "are"} reached from ${params.target}`;
  const possible = loose.length === 0 ? [] : ["", looseHeading, ...capped(possibleLines)];
  return [
    `${count(sure.length, "function")} ${what} within ${count(depth, "call")} (path:line is the definition):`,
    ...sure.map(lineOf),
    ...possible,
    ...stopped,
    ...note,
  ].join("\n");
}

async function callChain(
  deps: GraphDeps,
  session: GraphSession,
  ctx: ExtensionContext,
  params: RelationParams,
  signal: AbortSignal | undefined,
): Promise<string> {
  const [from, to] = params.to ? [params.target, params.to] : params.target.split("->").map((part) => part.trim());
  if (!from || !to) {
    throw new ToolFailure("FAILED", "call_chain needs a start and an end", "pass target (start) and to (end).");
  }
  const depth = params.depth ?? 5;
  const ends = await functionsNamed(deps, session, to, undefined, signal);
  const starts = await functionsNamed(deps, session, from, undefined, signal);
  if (starts.length === 0) await requireSymbol(deps, session, from, undefined, signal);
  if (ends.length === 0) await requireSymbol(deps, session, to, undefined, signal);
  // Walked back from the end: every function that reaches it within depth, and the calls between them.
  const walk = await reachCalls(
    (query, values) => cypherRows(deps, session, query, values, signal),
    ends,
    "callers",
    depth,
    CHAIN_WALK_LIMIT,
  );
  const chains = chainsOf(walk, starts as FunctionKey[], depth, 10);
  const note = [
    "",
    "Only the graph's calls are followed: a link the graph does not hold (pi-cgc's own possible callers) is not; ask relation callers of a function for them.",
  ];
  if (chains.length === 0)
    return [`No call chain from ${from} to ${to} in the graph within ${count(depth, "call")}.`, ...note].join("\n");
  const lines = chains.map((chain, index) => {
    const names = chain.functions.map((fn) => `${fn.name} (${location(ctx.cwd, fn.path, fn.line)})`).join(" → ");
    return `${index + 1}. ${names}${chain.possible ? `  [through a possible call: ${chain.possible}]` : ""}`;
  });
  const loose = chains.filter((chain) => chain.possible !== undefined).length;
  const marked = loose === 0 ? "" : ` (${loose} through a possible call, marked)`;
  return [
    `${count(chains.length, "call chain")} from ${from} to ${to}, shortest first${marked}:`,
    ...lines,
    ...note,
  ].join("\n");
}

async function catalogRelation(
  deps: GraphDeps,
  session: GraphSession,
  ctx: ExtensionContext,
  params: RelationParams,
  file: string | undefined,
  signal: AbortSignal | undefined,
): Promise<string> {
  const queryType = { importers: "find_importers", class_hierarchy: "class_hierarchy", overrides: "overrides" }[
    params.relation as "importers" | "class_hierarchy" | "overrides"
  ];
  const value = await catalog(
    deps,
    session,
    "analyze_code_relationships",
    { query_type: queryType, target: params.target, repo_path: session.root, ...(file ? { context: file } : {}) },
    signal,
  );
  const results = ((value.results ?? {}) as Row).results;
  if (params.relation === "class_hierarchy") {
    const tree = (results ?? {}) as Record<string, Row[] | undefined>;
    const parents = (tree.parent_classes ?? []).map(
      (row) => `- parent ${text(row.parent_class)}  ${location(ctx.cwd, row.parent_file_path, row.parent_line_number)}`,
    );
    const children = (tree.child_classes ?? []).map(
      (row) => `- child ${text(row.child_class)}  ${location(ctx.cwd, row.child_file_path, row.child_line_number)}`,
    );
    const methods = (tree.methods ?? []).map(
      (row) => `- method ${text(row.method_name)}  ${location(ctx.cwd, row.method_file_path, row.method_line_number)}`,
    );
    if (parents.length + children.length + methods.length === 0)
      await requireSymbol(deps, session, params.target, file, signal);
    return [
      `Class ${params.target}: ${count(parents.length, "parent")}, ${count(children.length, "child", "children")}, ${count(methods.length, "method")}`,
      ...parents,
      ...children,
      ...methods,
    ].join("\n");
  }
  const rows = Array.isArray(results) ? (results as Row[]) : [];
  if (params.relation === "overrides") {
    if (rows.length === 0) await requireSymbol(deps, session, params.target, file, signal);
    const lines = rows.map(
      (row) =>
        `- ${text(row.class_name)}.${text(row.function_name)}  ${location(ctx.cwd, row.class_file_path, row.function_line_number)}`,
    );
    return [`${count(rows.length, "implementation")} of ${params.target}:`, ...lines].join("\n");
  }
  const lines = rows.map((row) => {
    const imports = Array.isArray(row.imports) ? (row.imports as Row[]) : [];
    const names = imports.map((entry) => text(entry.full_import_name) || text(entry.imported_module)).join(", ");
    return `- ${location(ctx.cwd, row.path, undefined)}  (${names})`;
  });
  if (rows.length === 0) return `No file imports ${params.target} (give a module name such as pkg.text).`;
  return [`${count(rows.length, "file")} ${rows.length === 1 ? "imports" : "import"} ${params.target}:`, ...lines].join(
    "\n",
  );
}

function relationsTool(deps: GraphDeps) {
  return defineTool({
    name: GRAPH_TOOL_NAMES.relations,
    label: "cgc relations",
    description:
      "How code relates, from this workspace's code graph: callers or callees of a function (direct or transitive), call chains between two functions, files importing a module, a class's hierarchy, implementations (overrides) of a method. Use it for impact analysis before changing a function. Returns names with path:line; direct callers and callees the graph resolved with confidence first, then possible ones, each marked with why (cgc's guesses; for callers also calls of the name pi-cgc could not rule out): read them too before changing a signature. Transitive answers and call chains mark what is reached only through a possible call.",
    parameters: Type.Object({
      relation: StringEnum(RELATIONS, {
        description:
          "callers | callees (direct); callers_transitive | callees_transitive (up to depth); call_chain (target → to); importers (target is a module); class_hierarchy (target is a class); overrides (target is a method name)",
      }),
      target: Type.String({ description: "Function, class, method or module name (for call_chain: the start)" }),
      to: Type.Optional(Type.String({ description: "call_chain only: the function the chain ends at" })),
      depth: Type.Optional(
        Type.Integer({ minimum: 1, maximum: 10, description: "Transitive and call_chain depth (default 3; chains 5)" }),
      ),
      file: Type.Optional(
        Type.String({ description: "Only the target defined in this file (a path inside the workspace)" }),
      ),
    }),
    async execute(_id, params, signal, _update, ctx) {
      return answer(deps, signal, async (session) => {
        let file: string | undefined;
        if (params.file !== undefined) {
          const confined = confinedPath(ctx.cwd, params.file, [session.root]);
          if (confined instanceof ToolFailure) throw confined;
          file = confined;
        }
        switch (params.relation) {
          case "callers":
          case "callees":
            return directCalls(deps, session, ctx, params, file, signal);
          case "callers_transitive":
          case "callees_transitive":
            return transitiveCalls(deps, session, ctx, params, file, signal);
          case "call_chain":
            return callChain(deps, session, ctx, params, signal);
          default:
            return catalogRelation(deps, session, ctx, params, file, signal);
        }
      });
    },
  });
}

// ---------------------------------------------------------------------------------------------------
// Dead code, complexity, Cypher, stats

function deadCodeTool(deps: GraphDeps) {
  return defineTool({
    name: GRAPH_TOOL_NAMES.deadCode,
    label: "cgc dead code",
    description:
      "Functions in this workspace that nothing calls, from the code graph (candidates: entry points, callbacks and dynamic calls also show up); a function with a possible caller is left out and counted. Returns name and path:line.",
    parameters: Type.Object({
      exclude_decorated_with: Type.Optional(
        Type.Array(Type.String(), { description: "Skip functions with these decorators (e.g. app.route)" }),
      ),
    }),
    async execute(_id, params, signal, _update, ctx) {
      return answer(deps, signal, async (session) => {
        const value = await catalog(
          deps,
          session,
          "find_dead_code",
          { exclude_decorated_with: params.exclude_decorated_with ?? [], repo_path: session.root },
          signal,
        );
        const found = (((value.results ?? {}) as Row).potentially_unused_functions ?? []) as Row[];
        // cgc leaves out any function with a call edge, confirmed or not; pi-cgc's own possible callers leave out more.
        const targets = found.map((row) => ({
          path: text(row.path),
          name: text(row.function_name),
          line: Number(row.line_number),
        }));
        const engine = await engineSites(deps.possibleCallers, targets, new Set(), signal);
        const called = new Set(
          "sites" in engine ? engine.sites.map((site) => `${site.target.path}\0${site.target.line}`) : [],
        );
        const rows = found.filter((row) => !called.has(`${text(row.path)}\0${Number(row.line_number)}`));
        const left = found.length - rows.length;
        const leftOut =
          left > 0
            ? [
                "",
                `${count(left, "more function")} left out: ${left === 1 ? "it has" : "they have"} possible callers (calls of ${left === 1 ? "its" : "their"} name pi-cgc could not rule out; relation callers lists them).`,
              ]
            : [];
        const unknown =
          "unknown" in engine
            ? [
                "",
                `This list may include functions with possible callers the graph does not link: they are unknown (${engine.unknown}).`,
              ]
            : [];
        if (rows.length === 0) return ["No unused functions found.", ...leftOut, ...unknown].join("\n");
        const lines = rows.map((row) => {
          const owner = typeof row.context === "string" && row.context ? `${row.context}.` : "";
          return `- ${owner}${text(row.function_name)}  ${location(ctx.cwd, row.path, row.line_number)}  (${text(row.confidence) || "?"} confidence)`;
        });
        return [
          `${count(rows.length, "function")} nothing calls (check entry points and dynamic use before deleting):`,
          ...lines,
          ...leftOut,
          ...unknown,
        ].join("\n");
      });
    },
  });
}

function complexityTool(deps: GraphDeps) {
  return defineTool({
    name: GRAPH_TOOL_NAMES.complexity,
    label: "cgc complexity",
    description:
      "The most complex functions in this workspace by cyclomatic complexity, from the code graph. Returns complexity, name and path:line.",
    parameters: Type.Object({
      limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, description: "How many (default 10)" })),
    }),
    async execute(_id, params, signal, _update, ctx) {
      return answer(deps, signal, async (session) => {
        const value = await catalog(
          deps,
          session,
          "find_most_complex_functions",
          { limit: params.limit ?? 10, repo_path: session.root },
          signal,
        );
        const rows = (Array.isArray(value.results) ? value.results : []) as Row[];
        if (rows.length === 0) return "No functions with a complexity figure in the graph.";
        const lines = rows.map(
          (row) => `- ${row.complexity}  ${text(row.function_name)}  ${location(ctx.cwd, row.path, row.line_number)}`,
        );
        return [
          `${count(rows.length, "most complex function")} (cyclomatic complexity, name, path:line):`,
          ...lines,
        ].join("\n");
      });
    },
  });
}

function cypherTool(deps: GraphDeps) {
  return defineTool({
    name: GRAPH_TOOL_NAMES.cypher,
    label: "cgc cypher",
    description:
      "Run one read-only Cypher query on the code graph (nodes: Repository, File, Module, Class, Function, Variable; edges: CONTAINS, CALLS {line_number}, IMPORTS, INHERITS). Paths are absolute (f.path), lines are line_number. Writes are refused. Returns JSON rows.",
    parameters: Type.Object({
      query: Type.String({ description: "A read-only Cypher query (MATCH … RETURN …); add a LIMIT" }),
      params: Type.Optional(Type.Record(Type.String(), Type.Unknown(), { description: "Named parameters ($name)" })),
    }),
    async execute(_id, params, signal) {
      return answer(deps, signal, async (session) => {
        const rows = await cypherRows(deps, session, params.query, params.params ?? {}, signal);
        return `${count(rows.length, "row")}:\n${JSON.stringify(rows, null, 1)}`;
      });
    },
  });
}

function statsTool(deps: GraphDeps) {
  return defineTool({
    name: GRAPH_TOOL_NAMES.stats,
    label: "cgc stats",
    description: "Size of this workspace's code graph: files, functions, classes, modules.",
    parameters: Type.Object({}),
    async execute(_id, _params, signal) {
      return answer(deps, signal, async (session) => {
        const value = await catalog(deps, session, "get_repository_stats", { repo_path: session.root }, signal);
        const stats = (value.stats ?? {}) as Row;
        const parts = Object.entries(stats).map(([key, count]) => `${key}: ${count}`);
        return `Code graph of ${session.root}: ${parts.join(", ") || "no statistics"}`;
      });
    },
  });
}

/** Intent → pi-cgc's tool for it. */
export function graphTools(deps: GraphDeps): Record<Intent, ToolDefinition> {
  return {
    find: findTool(deps),
    relations: relationsTool(deps),
    deadCode: deadCodeTool(deps),
    complexity: complexityTool(deps),
    cypher: cypherTool(deps),
    stats: statsTool(deps),
  };
}
