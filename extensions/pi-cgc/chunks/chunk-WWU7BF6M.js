import {
  GRAPH_TOOL_NAMES,
  ToolFailure,
  answered,
  confinedPath,
  failureOf,
  liveSession,
  location
} from "./chunk-QWBAJ4R4.js";
import {
  count
} from "./chunk-U43P4R4X.js";
import {
  isReady
} from "./chunk-K7T5KA4E.js";

// src/agent/tools.ts
import { relative } from "node:path";
import { StringEnum } from "@mariozechner/pi-ai";
import {
  defineTool
} from "@mariozechner/pi-coding-agent";
import { Type } from "typebox";

// src/agent/call-confidence.ts
var plainName = (call) => typeof call === "string" && call !== "" && !call.includes(".");
function isConfirmedCall(edge) {
  if (edge.type !== "CALLS" || edge.label !== "EXTRACTED") return false;
  const tier = Number(edge.tier);
  return tier === 1 || tier === 6 || tier === 2 && plainName(edge.call);
}
function possibleCallWhy(edge) {
  switch (Number(edge.tier)) {
    case 2:
      return "a call through an object; cgc matched the method's name in the same file, not the object's type";
    case 3:
    case 4:
      return "cgc inferred the object's type";
    case 5:
      return "cgc matched a short name in the package, not an import";
    case 7:
      return "cgc matched part of a module path";
    case 8:
      return "several functions have this name; cgc picked one by name";
    case 9:
      return "an unresolved call on an object, linked to a function of the same file";
  }
  if (edge.label === "AMBIGUOUS") return "several functions have this name; cgc picked one by name";
  if (edge.label === "INFERRED") return "resolved by cgc's inference, not by an import or a definition";
  return `linked by a step of cgc's resolver (tier ${String(edge.tier ?? "?")}) measured under 95% right`;
}
function possibleCallRank(label) {
  if (label === "EXTRACTED") return 0;
  if (label === "INFERRED") return 1;
  if (label === "AMBIGUOUS") return 2;
  return 3;
}

// src/agent/cypher.ts
var READ_PROCEDURES = {
  // KùzuDB 0.11: the catalog's table functions.
  show_tables: ["kuzudb"],
  table_info: ["kuzudb"],
  show_connection: ["kuzudb"],
  db_version: ["kuzudb"],
  show_functions: ["kuzudb"],
  current_setting: ["kuzudb"],
  show_indexes: ["kuzudb"],
  show_sequences: ["kuzudb"],
  show_warnings: ["kuzudb"],
  // FalkorDB (Lite and server) and Neo4j: the schema's names.
  "db.labels": ["falkordb", "neo4j"],
  "db.relationshiptypes": ["falkordb", "neo4j"],
  "db.propertykeys": ["falkordb", "neo4j"],
  "db.indexes": ["falkordb"],
  // Neo4j 5: the schema's shape (db.indexes is SHOW INDEXES there).
  "db.schema.visualization": ["neo4j"],
  "db.schema.nodetypeproperties": ["neo4j"],
  "db.schema.reltypeproperties": ["neo4j"]
};
var START_CLAUSES = /* @__PURE__ */ new Set(["MATCH", "OPTIONAL", "WITH", "UNWIND", "RETURN", "CALL"]);
var ALLOWED_WORDS = /* @__PURE__ */ new Set([
  ...START_CLAUSES,
  "WHERE",
  "ORDER",
  "BY",
  "SKIP",
  "LIMIT",
  "UNION",
  "ALL",
  "YIELD",
  "DISTINCT",
  "AS",
  "AND",
  "OR",
  "XOR",
  "NOT",
  "IN",
  "IS",
  "NULL",
  "TRUE",
  "FALSE",
  "CONTAINS",
  "STARTS",
  "ENDS",
  "ASC",
  "ASCENDING",
  "DESC",
  "DESCENDING",
  "CASE",
  "WHEN",
  "THEN",
  "ELSE",
  "END",
  "EXISTS",
  "COUNT",
  "COLLECT"
]);
var TERM_WORDS = /* @__PURE__ */ new Set(["NULL", "TRUE", "FALSE", "END", "ASC", "ASCENDING", "DESC", "DESCENDING"]);
var KNOWN_CLAUSES = /* @__PURE__ */ new Set([
  "CREATE",
  "MERGE",
  "DELETE",
  "DETACH",
  "SET",
  "REMOVE",
  "DROP",
  "LOAD",
  "FOREACH",
  "ALTER",
  "COPY",
  "INSERT",
  "UPDATE",
  "TRUNCATE",
  "GRANT",
  "REVOKE",
  "INSTALL",
  "ATTACH",
  "EXPORT",
  "IMPORT",
  "USE",
  "BEGIN",
  "COMMIT",
  "ROLLBACK",
  "CHECKPOINT"
]);
var ASK_INSTEAD = "ask with the clauses that read (MATCH, OPTIONAL MATCH, WITH, WHERE, RETURN, ORDER BY, SKIP, LIMIT, UNWIND, UNION, CALL { \u2026 } of those), e.g. MATCH (f:Function) RETURN f.name LIMIT 20";
var QUOTED_OR_COMMENT = /'(?:\\.|[^'\\])*'|"(?:\\.|[^"\\])*"|`(?:\\.|[^`\\])*`|\/\/[^\n]*|\/\*[\s\S]*?\*\//g;
var TOKEN = /\$\w+|\w+|[^\w\s]/g;
var refuse = (reason) => ({ readOnly: false, reason });
var clauseRefused = (word) => refuse(`\`${word.toUpperCase()}\` is not a clause that only reads; ${ASK_INSTEAD}`);
var procedureRefused = (name) => refuse(
  `\`CALL ${name}\` is not a procedure pi-cgc knows to read (it knows ${Object.keys(READ_PROCEDURES).join(", ")}); ${ASK_INSTEAD}, or call one of those`
);
function checkReadOnlyCypher(query) {
  if (query.trim() === "") return refuse("the query is empty");
  const stripped = query.replace(
    QUOTED_OR_COMMENT,
    (text2) => text2.startsWith("`") ? " q_ " : text2.startsWith("/") ? " " : " 0 "
  );
  if (/['"`]|\/\*/.test(stripped)) return refuse("the query has an unterminated quote or comment");
  if (stripped.includes(";")) return refuse("one statement only (no `;`)");
  const tokens = stripped.match(TOKEN) ?? [];
  let clauseStart = true;
  let term = false;
  let previous = "";
  for (let index = 0; index < tokens.length; index++) {
    const token = tokens[index];
    const upper = token.toUpperCase();
    const isWord = /^[A-Za-z_]/.test(token);
    if (clauseStart && !(isWord && START_CLAUSES.has(upper))) {
      return isWord ? clauseRefused(token) : refuse(`a query or subquery starts with a clause, not \`${token}\`; ${ASK_INSTEAD}`);
    }
    clauseStart = false;
    const name = isWord && (previous === "." || previous === ":" || previous.toUpperCase() === "AS");
    previous = token;
    if (!isWord || name) {
      term = name || /^[\d$]/.test(token) || /^[)\]}]$/.test(token) || token === "*" && !term;
      continue;
    }
    if (KNOWN_CLAUSES.has(upper)) return clauseRefused(token);
    if (term && !ALLOWED_WORDS.has(upper)) return clauseRefused(token);
    if (upper === "CALL") {
      if (tokens[index + 1] === "{") {
        clauseStart = true;
        previous = "{";
        term = false;
        index++;
        continue;
      }
      let procedure = "";
      let at = index + 1;
      while (/^[A-Za-z_]\w*$/.test(tokens[at] ?? "")) {
        procedure += tokens[at];
        if (tokens[at + 1] !== "." || !/^[A-Za-z_]/.test(tokens[at + 2] ?? "")) break;
        procedure += ".";
        at += 2;
      }
      if (procedure === "" || tokens[at + 1] !== "(") {
        const shown = `${procedure} ${tokens[procedure === "" ? at : at + 1] ?? ""}`.trim();
        return refuse(
          `\`CALL ${shown}\` is neither a procedure pi-cgc knows to read nor a subquery (CALL { \u2026 }); ${ASK_INSTEAD}`
        );
      }
      if (!(procedure.toLowerCase() in READ_PROCEDURES)) return procedureRefused(procedure);
      index = at;
      previous = tokens[at];
      term = true;
      continue;
    }
    if (upper === "UNION") {
      if (tokens[index + 1]?.toUpperCase() === "ALL") index++;
      clauseStart = true;
      term = false;
      continue;
    }
    term = !ALLOWED_WORDS.has(upper) || TERM_WORDS.has(upper);
  }
  return { readOnly: true };
}

// src/agent/tools.ts
function readySession(session) {
  const state = session.store.get();
  if (state.readiness === "busy") throw failureOf("BUSY", state.reason);
  if (session.maintenanceRunning) {
    throw failureOf("BUSY", `pi-cgc is ${state.activity === "idle" ? "updating" : state.activity} the graph`);
  }
  if (!isReady(state)) {
    throw new ToolFailure(
      "UNAVAILABLE",
      `the code graph is not ready (${state.readiness}: ${state.reason})`,
      "use grep and read; the user can run /cgc status or /cgc index."
    );
  }
  return session;
}
async function catalog(deps, session, name, args, signal) {
  const outcome = await deps.lease(session).call(name, args, signal);
  if (!outcome.ok) {
    if (outcome.toolError && /read-only/i.test(outcome.reason)) {
      throw new ToolFailure("NOT_ALLOWED", outcome.reason, "write a query that only reads (MATCH \u2026 RETURN).");
    }
    throw failureOf(outcome.code === "OK" ? "FAILED" : outcome.code, outcome.reason);
  }
  const value = outcome.value;
  if (typeof value !== "object" || value === null) throw failureOf("FAILED", `cgc answered ${String(value)}`);
  const inner = value.results;
  const error = value.error ?? (typeof inner === "object" && inner !== null ? inner.error : void 0);
  if (typeof error === "string") throw failureOf("FAILED", error);
  return value;
}
async function cypherRows(deps, session, query, params, signal) {
  const verdict = checkReadOnlyCypher(query);
  if (!verdict.readOnly) {
    throw new ToolFailure("NOT_ALLOWED", `not a read-only query: ${verdict.reason}`, "write a query that only reads.");
  }
  const value = await catalog(deps, session, "execute_cypher_query", { cypher_query: query, params }, signal);
  return Array.isArray(value.results) ? value.results : [];
}
async function answer(deps, signal, body) {
  const session = liveSession(deps.current);
  return answered(session, async () => {
    const pending = await deps.settle(signal);
    const text2 = await body(readySession(session));
    return pending.length > 0 ? `${text2}

${pendingNote(session.root, pending)}` : text2;
  });
}
function pendingNote(root, paths) {
  const shown = paths.slice(0, 10).map((path) => relative(root, path) || path);
  const more = paths.length > shown.length ? ` and ${paths.length - shown.length} more` : "";
  return `Not in this answer yet (a graph update is still running): changes to ${shown.join(", ")}${more}.`;
}
var text = (value) => typeof value === "string" ? value : "";
var under = (root) => `${root.replace(/\/$/, "")}/`;
function findTool(deps) {
  return defineTool({
    name: GRAPH_TOOL_NAMES.find,
    label: "cgc find",
    description: "Find where a function, class or variable is defined in this workspace's code graph (by name, then by content). Returns kind, name and path:line.",
    parameters: Type.Object({
      query: Type.String({ description: "A symbol name or a word from the code" }),
      fuzzy: Type.Optional(Type.Boolean({ description: "Also match names within two typos (default false)" }))
    }),
    async execute(_id, params, signal, _update, ctx) {
      return answer(deps, signal, async (session) => {
        const value = await catalog(
          deps,
          session,
          "find_code",
          { query: params.query, fuzzy_search: params.fuzzy === true, repo_path: session.root },
          signal
        );
        const results = value.results ?? {};
        const lines = [];
        const add = (kind, rows) => {
          for (const row of rows ?? []) {
            const name = text(row.name) || "?";
            if (name === "<module>") continue;
            lines.push(`${kind} ${name}  ${location(ctx.cwd, row.path, row.line_number)}`);
          }
        };
        add("function", results.functions_by_name);
        add("class", results.classes_by_name);
        add("variable", results.variables_by_name);
        const byName = lines.length;
        const contentFiles = /* @__PURE__ */ new Set();
        for (const row of results.content_matches ?? []) {
          const where = location(ctx.cwd, row.path, row.name === "<module>" ? void 0 : row.line_number);
          if (contentFiles.has(where)) continue;
          contentFiles.add(where);
          lines.push(`mentions  ${row.name === "<module>" ? where : `${text(row.name)}  ${where}`}`);
        }
        if (lines.length === 0) {
          throw new ToolFailure(
            "NOT_FOUND",
            `nothing named or mentioning "${params.query}" in the graph`,
            "try fuzzy: true, or grep for the text."
          );
        }
        return [`${count(byName, "definition")} for "${params.query}":`, ...lines].join("\n");
      });
    }
  });
}
var RELATIONS = [
  "callers",
  "callees",
  "callers_transitive",
  "callees_transitive",
  "call_chain",
  "importers",
  "class_hierarchy",
  "overrides"
];
async function requireSymbol(deps, session, name, file, signal) {
  const rows = await cypherRows(
    deps,
    session,
    "OPTIONAL MATCH (f:Function) WHERE f.name = $name AND f.path STARTS WITH $root AND ($file = '' OR f.path = $file) WITH count(f) AS functions OPTIONAL MATCH (c:Class) WHERE c.name = $name AND c.path STARTS WITH $root AND ($file = '' OR c.path = $file) RETURN functions, count(c) AS classes",
    { name, root: under(session.root), file: file ?? "" },
    signal
  );
  const row = rows[0] ?? {};
  if (Number(row.functions ?? 0) + Number(row.classes ?? 0) === 0) {
    throw new ToolFailure(
      "NOT_FOUND",
      `no function or class named "${name}"${file ? ` in ${file}` : ""} in the graph of ${session.root}`,
      "check the spelling with cgc_find; for text, use grep."
    );
  }
}
var POSSIBLE_SHOWN = 10;
async function directCalls(deps, session, ctx, params, file, signal) {
  const callers = params.relation === "callers";
  const edge = callers ? "(f:Function)<-[r:CALLS|HEURISTIC_CALLS]-(o:Function)" : "(f:Function)-[r:CALLS|HEURISTIC_CALLS]->(o:Function)";
  const query = `MATCH ${edge} WHERE f.name = $name AND f.path STARTS WITH $root AND ($file = '' OR f.path = $file) RETURN o.name AS name, o.path AS path, o.line_number AS defined, r.line_number AS call_line, f.path AS target_path, f.line_number AS target_line, type(r) AS type, r.confidence_label AS label, r.resolution_tier AS tier, r.full_call_name AS call ` + (callers ? "ORDER BY path, call_line" : "ORDER BY call_line, name");
  const rows = await cypherRows(
    deps,
    session,
    query,
    { name: params.target, root: under(session.root), file: file ?? "" },
    signal
  );
  if (rows.length === 0) {
    await requireSymbol(deps, session, params.target, file, signal);
    return `No ${callers ? "callers of" : "calls from"} ${params.target} in the graph.`;
  }
  const lineOf = (row) => callers ? `- ${text(row.name)}  ${location(ctx.cwd, row.path, row.call_line)}  (calls ${params.target}; ${text(row.name)} defined at line ${row.defined})` : `- ${text(row.name)}  ${location(ctx.cwd, row.path, row.defined)}  (called at ${location(ctx.cwd, row.target_path, row.call_line)})`;
  const functionOf = (row) => `${text(row.name)}\0${text(row.path)}\0${text(row.defined)}`;
  const edgeOf = (row) => ({ type: text(row.type), label: row.label, tier: row.tier, call: row.call });
  const confirmedRows = rows.filter((row) => isConfirmedCall(edgeOf(row)));
  const seen = /* @__PURE__ */ new Set();
  const lines = [];
  const functions = /* @__PURE__ */ new Set();
  for (const row of confirmedRows) {
    functions.add(functionOf(row));
    const line = lineOf(row);
    if (seen.has(line)) continue;
    seen.add(line);
    lines.push(line);
  }
  const possibleRows = rows.filter((row) => !isConfirmedCall(edgeOf(row))).sort(
    (a, b) => possibleCallRank(a.label) - possibleCallRank(b.label) || text(a.path).localeCompare(text(b.path)) || Number(a.call_line) - Number(b.call_line)
  );
  const possibleLines = [];
  const possibleFunctions = /* @__PURE__ */ new Set();
  for (const row of possibleRows) {
    const line = lineOf(row);
    if (seen.has(line)) continue;
    seen.add(line);
    possibleFunctions.add(functionOf(row));
    possibleLines.push(`${line}  [possible: ${possibleCallWhy(edgeOf(row))}]`);
  }
  const shown = possibleLines.slice(0, POSSIBLE_SHOWN);
  if (possibleLines.length > shown.length) shown.push(`\u2026 ${possibleLines.length - shown.length} more possible`);
  const what = callers ? "possible caller" : "possible callee";
  const notConfirmed = "not confirmed: cgc linked these by name or by inference, not by an import or a definition; each says why";
  if (lines.length === 0) {
    const where = callers ? "path:line is the call site" : "path:line is the definition";
    return [
      `No confirmed ${callers ? "callers of" : "calls from"} ${params.target}; ${possibleFunctions.size} possible (${notConfirmed}; ${where}):`,
      ...shown
    ].join("\n");
  }
  const sites = lines.length === functions.size ? "" : ` at ${lines.length} call sites`;
  const heading = callers ? `${count(functions.size, "caller")} of ${params.target}${sites} (path:line is the call site):` : `${params.target} calls ${count(functions.size, "function")}${sites} (path:line is the definition):`;
  const possible = shown.length === 0 ? [] : ["", `${count(possibleFunctions.size, what)} (${notConfirmed}):`, ...shown];
  return [heading, ...lines, ...possible].join("\n");
}
async function transitiveCalls(deps, session, ctx, params, file, signal) {
  const depth = params.depth ?? 3;
  const callers = params.relation === "callers_transitive";
  const pattern = callers ? `(o:Function)-[:CALLS*1..${depth}]->(f:Function)` : `(f:Function)-[:CALLS*1..${depth}]->(o:Function)`;
  const rows = await cypherRows(
    deps,
    session,
    `MATCH p = ${pattern} WHERE f.name = $name AND f.path STARTS WITH $root AND ($file = '' OR f.path = $file) AND o <> f RETURN o.name AS name, o.path AS path, o.line_number AS line, min(length(p)) AS hops ORDER BY hops, path, line LIMIT 200`,
    { name: params.target, root: under(session.root), file: file ?? "" },
    signal
  );
  if (rows.length === 0) {
    await requireSymbol(deps, session, params.target, file, signal);
    return `No ${callers ? "callers of" : "calls from"} ${params.target} within ${count(depth, "hop")}.`;
  }
  const lines = rows.map(
    (row) => `- ${text(row.name)}  ${location(ctx.cwd, row.path, row.line)}  (${count(Number(row.hops), "hop")})`
  );
  const one = rows.length === 1;
  const what = callers ? `${one ? "reaches" : "reach"} ${params.target}` : `${one ? "is" : "are"} reached from ${params.target}`;
  return [
    `${count(rows.length, "function")} ${what} within ${count(depth, "call")} (path:line is the definition):`,
    ...lines
  ].join("\n");
}
async function callChain(deps, session, ctx, params, signal) {
  const [from, to] = params.to ? [params.target, params.to] : params.target.split("->").map((part) => part.trim());
  if (!from || !to) {
    throw new ToolFailure("FAILED", "call_chain needs a start and an end", "pass target (start) and to (end).");
  }
  const depth = params.depth ?? 5;
  const rows = await cypherRows(
    deps,
    session,
    `MATCH p = (a:Function)-[:CALLS*1..${depth}]->(b:Function) WHERE a.name = $from AND b.name = $to AND a.path STARTS WITH $root RETURN nodes(p) AS chain, length(p) AS hops ORDER BY hops LIMIT 10`,
    { from, to, root: under(session.root) },
    signal
  );
  if (rows.length === 0) {
    await requireSymbol(deps, session, from, void 0, signal);
    await requireSymbol(deps, session, to, void 0, signal);
    return `No call chain from ${from} to ${to} within ${count(depth, "call")}.`;
  }
  const chains = rows.map((row, index) => {
    const nodes = Array.isArray(row.chain) ? row.chain : [];
    return `${index + 1}. ${nodes.map((node) => `${text(node.name)} (${location(ctx.cwd, node.path, node.line_number)})`).join(" \u2192 ")}`;
  });
  return [`${count(rows.length, "call chain")} from ${from} to ${to}, shortest first:`, ...chains].join("\n");
}
async function catalogRelation(deps, session, ctx, params, file, signal) {
  const queryType = { importers: "find_importers", class_hierarchy: "class_hierarchy", overrides: "overrides" }[params.relation];
  const value = await catalog(
    deps,
    session,
    "analyze_code_relationships",
    { query_type: queryType, target: params.target, repo_path: session.root, ...file ? { context: file } : {} },
    signal
  );
  const results = (value.results ?? {}).results;
  if (params.relation === "class_hierarchy") {
    const tree = results ?? {};
    const parents = (tree.parent_classes ?? []).map(
      (row) => `- parent ${text(row.parent_class)}  ${location(ctx.cwd, row.parent_file_path, row.parent_line_number)}`
    );
    const children = (tree.child_classes ?? []).map(
      (row) => `- child ${text(row.child_class)}  ${location(ctx.cwd, row.child_file_path, row.child_line_number)}`
    );
    const methods = (tree.methods ?? []).map(
      (row) => `- method ${text(row.method_name)}  ${location(ctx.cwd, row.method_file_path, row.method_line_number)}`
    );
    if (parents.length + children.length + methods.length === 0)
      await requireSymbol(deps, session, params.target, file, signal);
    return [
      `Class ${params.target}: ${count(parents.length, "parent")}, ${count(children.length, "child", "children")}, ${count(methods.length, "method")}`,
      ...parents,
      ...children,
      ...methods
    ].join("\n");
  }
  const rows = Array.isArray(results) ? results : [];
  if (params.relation === "overrides") {
    if (rows.length === 0) await requireSymbol(deps, session, params.target, file, signal);
    const lines2 = rows.map(
      (row) => `- ${text(row.class_name)}.${text(row.function_name)}  ${location(ctx.cwd, row.class_file_path, row.function_line_number)}`
    );
    return [`${count(rows.length, "implementation")} of ${params.target}:`, ...lines2].join("\n");
  }
  const lines = rows.map((row) => {
    const imports = Array.isArray(row.imports) ? row.imports : [];
    const names = imports.map((entry) => text(entry.full_import_name) || text(entry.imported_module)).join(", ");
    return `- ${location(ctx.cwd, row.path, void 0)}  (${names})`;
  });
  if (rows.length === 0) return `No file imports ${params.target} (give a module name such as pkg.text).`;
  return [`${count(rows.length, "file")} ${rows.length === 1 ? "imports" : "import"} ${params.target}:`, ...lines].join(
    "\n"
  );
}
function relationsTool(deps) {
  return defineTool({
    name: GRAPH_TOOL_NAMES.relations,
    label: "cgc relations",
    description: "How code relates, from this workspace's code graph: callers or callees of a function (direct or transitive), call chains between two functions, files importing a module, a class's hierarchy, implementations (overrides) of a method. Use it for impact analysis before changing a function. Returns names with path:line; direct callers and callees the graph resolved with confidence first, then possible ones (cgc's guesses, each marked with why: read them too before changing a signature).",
    parameters: Type.Object({
      relation: StringEnum(RELATIONS, {
        description: "callers | callees (direct); callers_transitive | callees_transitive (up to depth); call_chain (target \u2192 to); importers (target is a module); class_hierarchy (target is a class); overrides (target is a method name)"
      }),
      target: Type.String({ description: "Function, class, method or module name (for call_chain: the start)" }),
      to: Type.Optional(Type.String({ description: "call_chain only: the function the chain ends at" })),
      depth: Type.Optional(
        Type.Integer({ minimum: 1, maximum: 10, description: "Transitive and call_chain depth (default 3; chains 5)" })
      ),
      file: Type.Optional(
        Type.String({ description: "Only the target defined in this file (a path inside the workspace)" })
      )
    }),
    async execute(_id, params, signal, _update, ctx) {
      return answer(deps, signal, async (session) => {
        let file;
        if (params.file !== void 0) {
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
    }
  });
}
function deadCodeTool(deps) {
  return defineTool({
    name: GRAPH_TOOL_NAMES.deadCode,
    label: "cgc dead code",
    description: "Functions in this workspace that nothing calls, from the code graph (candidates: entry points, callbacks and dynamic calls also show up). Returns name and path:line.",
    parameters: Type.Object({
      exclude_decorated_with: Type.Optional(
        Type.Array(Type.String(), { description: "Skip functions with these decorators (e.g. app.route)" })
      )
    }),
    async execute(_id, params, signal, _update, ctx) {
      return answer(deps, signal, async (session) => {
        const value = await catalog(
          deps,
          session,
          "find_dead_code",
          { exclude_decorated_with: params.exclude_decorated_with ?? [], repo_path: session.root },
          signal
        );
        const rows = (value.results ?? {}).potentially_unused_functions ?? [];
        if (rows.length === 0) return "No unused functions found.";
        const lines = rows.map((row) => {
          const owner = typeof row.context === "string" && row.context ? `${row.context}.` : "";
          return `- ${owner}${text(row.function_name)}  ${location(ctx.cwd, row.path, row.line_number)}  (${text(row.confidence) || "?"} confidence)`;
        });
        return [
          `${count(rows.length, "function")} nothing calls (check entry points and dynamic use before deleting):`,
          ...lines
        ].join("\n");
      });
    }
  });
}
function complexityTool(deps) {
  return defineTool({
    name: GRAPH_TOOL_NAMES.complexity,
    label: "cgc complexity",
    description: "The most complex functions in this workspace by cyclomatic complexity, from the code graph. Returns complexity, name and path:line.",
    parameters: Type.Object({
      limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, description: "How many (default 10)" }))
    }),
    async execute(_id, params, signal, _update, ctx) {
      return answer(deps, signal, async (session) => {
        const value = await catalog(
          deps,
          session,
          "find_most_complex_functions",
          { limit: params.limit ?? 10, repo_path: session.root },
          signal
        );
        const rows = Array.isArray(value.results) ? value.results : [];
        if (rows.length === 0) return "No functions with a complexity figure in the graph.";
        const lines = rows.map(
          (row) => `- ${row.complexity}  ${text(row.function_name)}  ${location(ctx.cwd, row.path, row.line_number)}`
        );
        return [
          `${count(rows.length, "most complex function")} (cyclomatic complexity, name, path:line):`,
          ...lines
        ].join("\n");
      });
    }
  });
}
function cypherTool(deps) {
  return defineTool({
    name: GRAPH_TOOL_NAMES.cypher,
    label: "cgc cypher",
    description: "Run one read-only Cypher query on the code graph (nodes: Repository, File, Module, Class, Function, Variable; edges: CONTAINS, CALLS {line_number}, IMPORTS, INHERITS). Paths are absolute (f.path), lines are line_number. Writes are refused. Returns JSON rows.",
    parameters: Type.Object({
      query: Type.String({ description: "A read-only Cypher query (MATCH \u2026 RETURN \u2026); add a LIMIT" }),
      params: Type.Optional(Type.Record(Type.String(), Type.Unknown(), { description: "Named parameters ($name)" }))
    }),
    async execute(_id, params, signal) {
      return answer(deps, signal, async (session) => {
        const rows = await cypherRows(deps, session, params.query, params.params ?? {}, signal);
        return `${count(rows.length, "row")}:
${JSON.stringify(rows, null, 1)}`;
      });
    }
  });
}
function statsTool(deps) {
  return defineTool({
    name: GRAPH_TOOL_NAMES.stats,
    label: "cgc stats",
    description: "Size of this workspace's code graph: files, functions, classes, modules.",
    parameters: Type.Object({}),
    async execute(_id, _params, signal) {
      return answer(deps, signal, async (session) => {
        const value = await catalog(deps, session, "get_repository_stats", { repo_path: session.root }, signal);
        const stats = value.stats ?? {};
        const parts = Object.entries(stats).map(([key, count2]) => `${key}: ${count2}`);
        return `Code graph of ${session.root}: ${parts.join(", ") || "no statistics"}`;
      });
    }
  });
}
function graphTools(deps) {
  return {
    find: findTool(deps),
    relations: relationsTool(deps),
    deadCode: deadCodeTool(deps),
    complexity: complexityTool(deps),
    cypher: cypherTool(deps),
    stats: statsTool(deps)
  };
}

export {
  cypherRows,
  answer,
  graphTools
};
