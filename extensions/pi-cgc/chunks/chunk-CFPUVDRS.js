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
var superCall = (call) => typeof call === "string" && /^super\b/.test(call);
function isConfirmedCall(edge) {
  if (edge.type !== "CALLS" || edge.label !== "EXTRACTED") return false;
  if (edge.recursive === true && superCall(edge.call)) return false;
  const tier = Number(edge.tier);
  return tier === 1 || tier === 6 || tier === 2 && plainName(edge.call);
}
function possibleCallWhy(edge) {
  if (edge.recursive === true && superCall(edge.call)) return "cgc linked a super() call to the calling method itself";
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
var FALLBACK_RANK = 2;
function listedSites(sites, graphCallers) {
  const strong = sites.filter((site) => site.rank < FALLBACK_RANK);
  return graphCallers + strong.length > 0 ? strong : [...sites];
}

// src/agent/call-reach.ts
var keyOf = (fn) => `${fn.path}\0${fn.line}\0${fn.name}`;
var text = (value) => typeof value === "string" ? value : "";
var functionOf = (name, path, line) => ({
  name: text(name),
  path: text(path),
  line: Number(line)
});
var edgeOf = (row, recursive = false) => ({
  type: text(row.type),
  label: row.label,
  tier: row.tier,
  call: row.call,
  recursive
});
async function hop(rows, from, direction, label) {
  const edge = direction === "callers" ? `(o:Function)-[r:CALLS|HEURISTIC_CALLS]->(f:${label})` : `(f:${label})-[r:CALLS|HEURISTIC_CALLS]->(o:Function)`;
  const wanted = new Set(from.map(keyOf));
  const found = await rows(
    `MATCH ${edge} WHERE f.path IN $paths AND f.line_number IN $lines RETURN f.name AS fname, f.path AS fpath, f.line_number AS fline, o.name AS name, o.path AS path, o.line_number AS line, type(r) AS type, r.confidence_label AS label, r.resolution_tier AS tier, r.full_call_name AS call`,
    { paths: [...new Set(from.map((fn) => fn.path))], lines: [...new Set(from.map((fn) => fn.line))] }
  );
  return found.filter((row) => wanted.has(keyOf(functionOf(row.fname, row.fpath, row.fline))));
}
async function reachCalls(rows, seeds, direction, depth, limit, seedLabel = "Function") {
  const seedKeys = new Set(seeds.map(keyOf));
  const confirmed = /* @__PURE__ */ new Map();
  const possible = /* @__PURE__ */ new Map();
  const distance = new Map(seeds.map((seed) => [keyOf(seed), 0]));
  const links = /* @__PURE__ */ new Map();
  let frontier = seeds;
  let truncated = false;
  for (let hops = 1; hops <= depth && frontier.length > 0 && !truncated; hops++) {
    const next = /* @__PURE__ */ new Map();
    for (const row of await hop(rows, frontier, direction, hops === 1 ? seedLabel : "Function")) {
      const near = functionOf(row.fname, row.fpath, row.fline);
      const far = functionOf(row.name, row.path, row.line);
      const nearKey = keyOf(near);
      const farKey = keyOf(far);
      const edge = edgeOf(row, nearKey === farKey);
      const sure = isConfirmedCall(edge);
      const [caller, callee] = direction === "callers" ? [far, near] : [near, far];
      const linkKey = `${keyOf(caller)}\0\0${keyOf(callee)}`;
      const link = links.get(linkKey);
      if (!link || !link.confirmed && sure)
        links.set(linkKey, { caller, callee, confirmed: sure, why: sure ? void 0 : possibleCallWhy(edge) });
      if (seedKeys.has(farKey)) continue;
      if (!distance.has(farKey)) distance.set(farKey, hops);
      const nearSure = seedKeys.has(nearKey) || confirmed.has(nearKey);
      if (nearSure && sure) {
        if (confirmed.has(farKey)) continue;
        confirmed.set(farKey, { ...far, hops });
        next.set(farKey, far);
      } else if (!confirmed.has(farKey) && !possible.has(farKey)) {
        const why = nearSure ? `${caller.name} \u2192 ${callee.name}: ${possibleCallWhy(edge)}` : possible.get(nearKey)?.possible ?? possibleCallWhy(edge);
        possible.set(farKey, { ...far, hops, possible: why });
        next.set(farKey, far);
      }
    }
    frontier = [...next.values()];
    truncated = confirmed.size + possible.size >= limit && frontier.length > 0 && hops < depth;
  }
  const order = (a, b) => a.hops - b.hops || a.path.localeCompare(b.path) || a.line - b.line;
  const reached = [
    ...[...confirmed.values()].sort(order),
    ...[...possible.entries()].filter(([key]) => !confirmed.has(key)).map(([, fn]) => fn).sort(order)
  ];
  return { reached, links: [...links.values()], distance, truncated };
}
var CHAINS_PER_LENGTH = 1e3;
function chainsOf(reach, starts, depth, limit) {
  const out = /* @__PURE__ */ new Map();
  for (const link of reach.links) {
    const from = keyOf(link.caller);
    out.set(from, [...out.get(from) ?? [], link]);
  }
  const chains = [];
  for (let length = 1; length <= depth && chains.length < limit; length++) {
    const found = [];
    const walk = (path, links, left) => {
      const at = path[path.length - 1];
      if (left === 0) {
        if (reach.distance.get(keyOf(at)) !== 0) return;
        const loose = links.find((link) => !link.confirmed);
        found.push({
          functions: path,
          possible: loose ? `${loose.caller.name} \u2192 ${loose.callee.name}: ${loose.why ?? "not confirmed"}` : void 0
        });
        return;
      }
      for (const link of out.get(keyOf(at)) ?? []) {
        if (found.length >= CHAINS_PER_LENGTH) return;
        const next = keyOf(link.callee);
        const remaining = reach.distance.get(next);
        if (remaining === void 0 || remaining > left - 1 || path.some((fn) => keyOf(fn) === next)) continue;
        walk([...path, link.callee], [...links, link], left - 1);
      }
    };
    for (const start of starts) if (reach.distance.has(keyOf(start))) walk([start], [], length);
    found.sort((a, b) => Number(a.possible !== void 0) - Number(b.possible !== void 0));
    chains.push(...found);
  }
  return chains.slice(0, limit);
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
    (text3) => text3.startsWith("`") ? " q_ " : text3.startsWith("/") ? " " : " 0 "
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

// src/agent/possible-callers.ts
var targetKey = (target) => `${target.path}\0${target.line}\0`;
var listedKey = (target, path, line) => `${targetKey(target)}${path}\0${Number(line)}`;
async function engineSites(possibleCallers, targets, listed, signal) {
  if (targets.length === 0) return { sites: [] };
  const answer2 = await possibleCallers(targets, signal);
  if ("unknown" in answer2) return answer2;
  const seen = /* @__PURE__ */ new Set();
  const sites = [];
  for (const [index, target] of targets.entries()) {
    const own = answer2.sites[index] ?? [];
    const edges = [...listed].filter((key) => key.startsWith(targetKey(target))).length;
    for (const site of listedSites(own, edges)) {
      const key = listedKey(target, site.path, site.line);
      if (listed.has(key) || seen.has(key)) continue;
      seen.add(key);
      sites.push({ ...site, target });
    }
  }
  sites.sort((a, b) => a.rank - b.rank || a.path.localeCompare(b.path) || a.line - b.line);
  return { sites };
}
var callerName = (site) => site.caller === "<module>" ? "(module level)" : site.caller;
var unknownLine = (reason) => `Possible callers the graph does not link: unknown (${reason}). Before changing a signature, also grep for calls of the name.`;

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
    const text3 = await body(readySession(session));
    return pending.length > 0 ? `${text3}

${pendingNote(session.root, pending)}` : text3;
  });
}
function pendingNote(root, paths) {
  const shown = paths.slice(0, 10).map((path) => relative(root, path) || path);
  const more = paths.length > shown.length ? ` and ${paths.length - shown.length} more` : "";
  return `Not in this answer yet (a graph update is still running): changes to ${shown.join(", ")}${more}.`;
}
var text2 = (value) => typeof value === "string" ? value : "";
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
            const name = text2(row.name) || "?";
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
          lines.push(`mentions  ${row.name === "<module>" ? where : `${text2(row.name)}  ${where}`}`);
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
var TRANSITIVE_LIMIT = 200;
var CHAIN_WALK_LIMIT = 2e3;
async function functionsNamed(deps, session, name, file, signal) {
  const rows = await cypherRows(
    deps,
    session,
    "MATCH (f:Function) WHERE f.name = $name AND f.path STARTS WITH $root AND ($file = '' OR f.path = $file) RETURN f.path AS path, f.line_number AS line ORDER BY path, line",
    { name, root: under(session.root), file: file ?? "" },
    signal
  );
  return rows.map((row) => ({ path: text2(row.path), name, line: Number(row.line) }));
}
function capped(lines) {
  const shown = lines.slice(0, POSSIBLE_SHOWN);
  if (lines.length > shown.length) shown.push(`\u2026 ${lines.length - shown.length} more possible`);
  return shown;
}
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
  const targets = callers ? await functionsNamed(deps, session, params.target, file, signal) : [];
  const listed = new Set(
    rows.map(
      (row) => listedKey(
        { path: text2(row.target_path), name: params.target, line: Number(row.target_line) },
        text2(row.path),
        row.call_line
      )
    )
  );
  const engine = await engineSites(deps.possibleCallers, targets, listed, signal);
  const engineFound = "sites" in engine ? engine.sites : [];
  const unknown = "unknown" in engine ? engine.unknown : void 0;
  if (rows.length === 0 && engineFound.length === 0) {
    if (targets.length === 0) await requireSymbol(deps, session, params.target, file, signal);
    if (!callers) return `No calls from ${params.target} in the graph.`;
    if (unknown !== void 0 && targets.length > 0)
      return `The graph links no callers of ${params.target}.
${unknownLine(unknown)}`;
    return targets.length > 0 ? `No callers of ${params.target}: none in the graph, and no call of that name that pi-cgc could not rule out.` : `No callers of ${params.target} in the graph.`;
  }
  const lineOf = (row) => callers ? `- ${text2(row.name)}  ${location(ctx.cwd, row.path, row.call_line)}  (calls ${params.target}; ${text2(row.name)} defined at line ${row.defined})` : `- ${text2(row.name)}  ${location(ctx.cwd, row.path, row.defined)}  (called at ${location(ctx.cwd, row.target_path, row.call_line)})`;
  const functionOf2 = (row) => `${text2(row.name)}\0${text2(row.path)}\0${text2(row.defined)}`;
  const edgeOf2 = (row) => edgeOf(row, text2(row.path) === text2(row.target_path) && Number(row.defined) === Number(row.target_line));
  const confirmedRows = rows.filter((row) => isConfirmedCall(edgeOf2(row)));
  const seen = /* @__PURE__ */ new Set();
  const lines = [];
  const functions = /* @__PURE__ */ new Set();
  for (const row of confirmedRows) {
    functions.add(functionOf2(row));
    const line = lineOf(row);
    if (seen.has(line)) continue;
    seen.add(line);
    lines.push(line);
  }
  const possibleRows = rows.filter((row) => !isConfirmedCall(edgeOf2(row))).sort(
    (a, b) => possibleCallRank(a.label) - possibleCallRank(b.label) || text2(a.path).localeCompare(text2(b.path)) || Number(a.call_line) - Number(b.call_line)
  );
  const possibleLines = [];
  const possibleFunctions = /* @__PURE__ */ new Set();
  for (const row of possibleRows) {
    const line = lineOf(row);
    if (seen.has(line)) continue;
    seen.add(line);
    possibleFunctions.add(functionOf2(row));
    possibleLines.push(`${line}  [possible: ${possibleCallWhy(edgeOf2(row))}]`);
  }
  for (const site of engineFound) {
    const where = location(ctx.cwd, site.path, site.line);
    const line = site.caller === "<module>" ? `- ${callerName(site)}  ${where}  (calls ${params.target})` : `- ${site.caller}  ${where}  (calls ${params.target}; ${site.caller} defined at line ${site.callerLine})`;
    if (seen.has(line)) continue;
    seen.add(line);
    possibleFunctions.add(`${site.caller}\0${site.path}\0${site.callerLine}`);
    possibleLines.push(`${line}  [possible: ${site.why}]`);
  }
  const shown = capped(possibleLines);
  const what = callers ? "possible caller" : "possible callee";
  const notConfirmed = callers ? "not confirmed: cgc linked these by name or by inference, or pi-cgc could not rule the call out; each says why" : "not confirmed: cgc linked these by name or by inference, not by an import or a definition; each says why";
  const unknownNote = unknown === void 0 ? [] : ["", unknownLine(unknown)];
  if (lines.length === 0) {
    const where = callers ? "path:line is the call site" : "path:line is the definition";
    return [
      `No confirmed ${callers ? "callers of" : "calls from"} ${params.target}; ${possibleFunctions.size} possible (${notConfirmed}; ${where}):`,
      ...shown,
      ...unknownNote
    ].join("\n");
  }
  const sites = lines.length === functions.size ? "" : ` at ${lines.length} call sites`;
  const heading = callers ? `${count(functions.size, "caller")} of ${params.target}${sites} (path:line is the call site):` : `${params.target} calls ${count(functions.size, "function")}${sites} (path:line is the definition):`;
  const possible = shown.length === 0 ? [] : ["", `${count(possibleFunctions.size, what)} (${notConfirmed}):`, ...shown];
  return [heading, ...lines, ...possible, ...unknownNote].join("\n");
}
var ENGINE_NOT_FOLLOWED = "Only the graph's calls are followed here: pi-cgc's own possible callers (calls the graph does not link) are not; ask relation callers of a function for them.";
async function transitiveCalls(deps, session, ctx, params, file, signal) {
  const depth = params.depth ?? 3;
  const callers = params.relation === "callers_transitive";
  const seeds = await functionsNamed(deps, session, params.target, file, signal);
  if (seeds.length === 0) await requireSymbol(deps, session, params.target, file, signal);
  const walk = await reachCalls(
    (query, values) => cypherRows(deps, session, query, values, signal),
    seeds,
    callers ? "callers" : "callees",
    depth,
    TRANSITIVE_LIMIT
  );
  const note = callers ? ["", ENGINE_NOT_FOLLOWED] : [];
  const sure = walk.reached.filter((fn) => fn.possible === void 0).slice(0, TRANSITIVE_LIMIT);
  const loose = walk.reached.filter((fn) => fn.possible !== void 0);
  const stopped = walk.truncated ? [`(The walk stopped at ${TRANSITIVE_LIMIT} functions; ask with a smaller depth.)`] : [];
  if (walk.reached.length === 0) {
    return [
      `No ${callers ? "callers of" : "calls from"} ${params.target} in the graph within ${count(depth, "hop")}.`,
      ...note
    ].join("\n");
  }
  const lineOf = (fn) => `- ${fn.name}  ${location(ctx.cwd, fn.path, fn.line)}  (${count(fn.hops, "hop")})`;
  const possibleLines = loose.map((fn) => `${lineOf(fn)}  [possible: through ${fn.possible}]`);
  const looseHeading = `${count(loose.length, "function")} ${callers ? `${loose.length === 1 ? "reaches" : "reach"} ${params.target}` : `${loose.length === 1 ? "is" : "are"} reached`} only through a possible call (not confirmed; each names the call and why):`;
  if (sure.length === 0) {
    return [
      `No function ${callers ? `reaches ${params.target}` : `is reached from ${params.target}`} through confirmed calls within ${count(depth, "call")}; ${looseHeading}`,
      ...capped(possibleLines),
      ...stopped,
      ...note
    ].join("\n");
  }
  const one = sure.length === 1;
  const what = callers ? `${one ? "reaches" : "reach"} ${params.target}` : `${one ? "is" : "are"} reached from ${params.target}`;
  const possible = loose.length === 0 ? [] : ["", looseHeading, ...capped(possibleLines)];
  return [
    `${count(sure.length, "function")} ${what} within ${count(depth, "call")} (path:line is the definition):`,
    ...sure.map(lineOf),
    ...possible,
    ...stopped,
    ...note
  ].join("\n");
}
async function callChain(deps, session, ctx, params, signal) {
  const [from, to] = params.to ? [params.target, params.to] : params.target.split("->").map((part) => part.trim());
  if (!from || !to) {
    throw new ToolFailure("FAILED", "call_chain needs a start and an end", "pass target (start) and to (end).");
  }
  const depth = params.depth ?? 5;
  const ends = await functionsNamed(deps, session, to, void 0, signal);
  const starts = await functionsNamed(deps, session, from, void 0, signal);
  if (starts.length === 0) await requireSymbol(deps, session, from, void 0, signal);
  if (ends.length === 0) await requireSymbol(deps, session, to, void 0, signal);
  const walk = await reachCalls(
    (query, values) => cypherRows(deps, session, query, values, signal),
    ends,
    "callers",
    depth,
    CHAIN_WALK_LIMIT
  );
  const chains = chainsOf(walk, starts, depth, 10);
  const note = [
    "",
    "Only the graph's calls are followed: a link the graph does not hold (pi-cgc's own possible callers) is not; ask relation callers of a function for them."
  ];
  if (chains.length === 0)
    return [`No call chain from ${from} to ${to} in the graph within ${count(depth, "call")}.`, ...note].join("\n");
  const lines = chains.map((chain, index) => {
    const names = chain.functions.map((fn) => `${fn.name} (${location(ctx.cwd, fn.path, fn.line)})`).join(" \u2192 ");
    return `${index + 1}. ${names}${chain.possible ? `  [through a possible call: ${chain.possible}]` : ""}`;
  });
  const loose = chains.filter((chain) => chain.possible !== void 0).length;
  const marked = loose === 0 ? "" : ` (${loose} through a possible call, marked)`;
  return [
    `${count(chains.length, "call chain")} from ${from} to ${to}, shortest first${marked}:`,
    ...lines,
    ...note
  ].join("\n");
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
      (row) => `- parent ${text2(row.parent_class)}  ${location(ctx.cwd, row.parent_file_path, row.parent_line_number)}`
    );
    const children = (tree.child_classes ?? []).map(
      (row) => `- child ${text2(row.child_class)}  ${location(ctx.cwd, row.child_file_path, row.child_line_number)}`
    );
    const methods = (tree.methods ?? []).map(
      (row) => `- method ${text2(row.method_name)}  ${location(ctx.cwd, row.method_file_path, row.method_line_number)}`
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
      (row) => `- ${text2(row.class_name)}.${text2(row.function_name)}  ${location(ctx.cwd, row.class_file_path, row.function_line_number)}`
    );
    return [`${count(rows.length, "implementation")} of ${params.target}:`, ...lines2].join("\n");
  }
  const lines = rows.map((row) => {
    const imports = Array.isArray(row.imports) ? row.imports : [];
    const names = imports.map((entry) => text2(entry.full_import_name) || text2(entry.imported_module)).join(", ");
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
    description: "How code relates, from this workspace's code graph: callers or callees of a function (direct or transitive), call chains between two functions, files importing a module, a class's hierarchy, implementations (overrides) of a method. Use it for impact analysis before changing a function. Returns names with path:line; direct callers and callees the graph resolved with confidence first, then possible ones, each marked with why (cgc's guesses; for callers also calls of the name pi-cgc could not rule out): read them too before changing a signature. Transitive answers and call chains mark what is reached only through a possible call.",
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
    description: "Functions in this workspace that nothing calls, from the code graph (candidates: entry points, callbacks and dynamic calls also show up); a function with a possible caller is left out and counted. Returns name and path:line.",
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
        const found = (value.results ?? {}).potentially_unused_functions ?? [];
        const targets = found.map((row) => ({
          path: text2(row.path),
          name: text2(row.function_name),
          line: Number(row.line_number)
        }));
        const engine = await engineSites(deps.possibleCallers, targets, /* @__PURE__ */ new Set(), signal);
        const called = new Set(
          "sites" in engine ? engine.sites.map((site) => `${site.target.path}\0${site.target.line}`) : []
        );
        const rows = found.filter((row) => !called.has(`${text2(row.path)}\0${Number(row.line_number)}`));
        const left = found.length - rows.length;
        const leftOut = left > 0 ? [
          "",
          `${count(left, "more function")} left out: ${left === 1 ? "it has" : "they have"} possible callers (calls of ${left === 1 ? "its" : "their"} name pi-cgc could not rule out; relation callers lists them).`
        ] : [];
        const unknown = "unknown" in engine ? [
          "",
          `This list may include functions with possible callers the graph does not link: they are unknown (${engine.unknown}).`
        ] : [];
        if (rows.length === 0) return ["No unused functions found.", ...leftOut, ...unknown].join("\n");
        const lines = rows.map((row) => {
          const owner = typeof row.context === "string" && row.context ? `${row.context}.` : "";
          return `- ${owner}${text2(row.function_name)}  ${location(ctx.cwd, row.path, row.line_number)}  (${text2(row.confidence) || "?"} confidence)`;
        });
        return [
          `${count(rows.length, "function")} nothing calls (check entry points and dynamic use before deleting):`,
          ...lines,
          ...leftOut,
          ...unknown
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
          (row) => `- ${row.complexity}  ${text2(row.function_name)}  ${location(ctx.cwd, row.path, row.line_number)}`
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
  isConfirmedCall,
  possibleCallWhy,
  edgeOf,
  reachCalls,
  listedKey,
  engineSites,
  unknownLine,
  cypherRows,
  answer,
  graphTools
};
