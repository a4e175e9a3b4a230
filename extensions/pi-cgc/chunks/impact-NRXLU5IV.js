import {
  codeOnly,
  definitionsOf,
  describeChange,
  headText,
  qualified,
  signatureChanges,
  supportedSource,
  workingChanges
} from "./chunk-CM7Q5FSW.js";
import {
  answer,
  cypherRows,
  edgeOf,
  engineSites,
  isConfirmedCall,
  listedKey,
  possibleCallWhy,
  reachCalls,
  unknownLine
} from "./chunk-CFPUVDRS.js";
import {
  IMPACT_TOOL_NAME,
  ToolFailure,
  confinedPath,
  location
} from "./chunk-QWBAJ4R4.js";
import {
  count
} from "./chunk-U43P4R4X.js";
import "./chunk-EM356YHV.js";
import "./chunk-K7T5KA4E.js";
import "./chunk-AN223M6Q.js";

// src/agent/impact.ts
import { readFileSync } from "node:fs";
import { basename, dirname, extname, relative, resolve } from "node:path";
import { defineTool } from "@mariozechner/pi-coding-agent";
import { Type } from "typebox";
var IMPACT_DEFAULT_DEPTH = 2;
var IMPACT_MAX_DEPTH = 4;
var FOLLOW_LIMIT = 50;
var WALK_LIMIT = 200;
var str = (value) => typeof value === "string" ? value : "";
var num = (value) => typeof value === "number" ? value : void 0;
var under = (root) => `${root.replace(/\/$/, "")}/`;
var breaking = (change) => change.change !== "added";
var noteWorthy = (change) => change.kind !== "class" && breaking(change);
function inChangedLines(changed, path, line) {
  const ranges = changed.get(path);
  if (!ranges) return false;
  if (line === void 0) return true;
  return ranges.some(([from, to]) => line >= from && line <= to);
}
function moduleStem(root, path) {
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
function importNames(root, importer, module, target) {
  const { dotted } = moduleStem(root, target);
  if (dotted !== void 0) {
    const name = module.replace(/^\.+/, "");
    if (!module.startsWith(".")) return name === dotted;
    const ups = (/^\.+/.exec(module)?.[0].length ?? 1) - 1;
    let base = dirname(relative(root, importer));
    for (let i = 0; i < ups; i++) base = dirname(base);
    const pkg = base === "." ? "" : `${base.replace(/\//g, ".")}.`;
    return `${pkg}${name}`.replace(/\.$/, "") === dotted;
  }
  if (!module.startsWith(".")) return false;
  const resolved = resolve(dirname(importer), module).replace(/\.(ts|tsx|mts|cts|js|jsx|mjs|cjs)$/, "");
  const bare = target.slice(0, target.length - extname(target).length);
  return resolved === bare || basename(bare) === "index" && resolved === dirname(bare);
}
function targetOf(change) {
  return change.after ?? change.before;
}
async function rows(q, cypher, params) {
  return cypherRows(q.deps, q.session, cypher, params, q.signal);
}
async function nodesOf(q, path, definition) {
  const isClass = definition.kind === "class";
  const found = await rows(
    q,
    `MATCH (f:${isClass ? "Class" : "Function"}) WHERE f.name = $name AND f.path = $path ` + (isClass ? "" : "AND ($owner = '' OR f.class_context = $owner) ") + "RETURN f.path AS path, f.line_number AS line ORDER BY path, line",
    { name: definition.name, path, owner: definition.owner ?? "" }
  );
  return found.map((row) => ({ name: definition.name, path: str(row.path), line: Number(row.line) }));
}
async function graphCallers(q, path, definition) {
  const isClass = definition.kind === "class";
  const found = await rows(
    q,
    `MATCH (o)-[r:CALLS|HEURISTIC_CALLS]->(f:${isClass ? "Class" : "Function"}) WHERE f.name = $name AND f.path = $path ` + (isClass ? "" : "AND ($owner = '' OR f.class_context = $owner) ") + "RETURN o.name AS name, o.path AS path, o.line_number AS defined, r.line_number AS line, f.line_number AS target_line, type(r) AS type, r.confidence_label AS label, r.resolution_tier AS tier, r.full_call_name AS call ORDER BY path, line",
    { name: definition.name, path, owner: definition.owner ?? "" }
  );
  const listed = new Set(
    found.map(
      (row) => listedKey({ path, name: definition.name, line: Number(row.target_line) }, str(row.path), row.line)
    )
  );
  const edge = (row) => edgeOf(row, str(row.path) === path && str(row.name) === definition.name && row.defined === row.target_line);
  const sure = new Set(
    found.filter((row) => isConfirmedCall(edge(row))).map((row) => `${str(row.path)}\0${num(row.line)}`)
  );
  const callers = found.filter((row) => isConfirmedCall(edge(row)) || !sure.has(`${str(row.path)}\0${num(row.line)}`)).map((row) => ({
    relation: "caller",
    name: str(row.name),
    path: str(row.path),
    line: num(row.line),
    hops: 1,
    possible: isConfirmedCall(edge(row)) ? void 0 : possibleCallWhy(edge(row))
  }));
  return { callers, listed };
}
async function engineCallers(q, path, definition, listed) {
  const targets = await nodesOf(q, path, definition);
  const answer2 = await engineSites(q.deps.possibleCallers, targets, listed, q.signal);
  if ("unknown" in answer2) return { callers: [], unknown: answer2.unknown };
  return {
    callers: answer2.sites.map((site) => ({
      relation: "caller",
      name: site.caller,
      path: site.path,
      line: site.line,
      hops: 1,
      possible: site.why
    }))
  };
}
async function transitiveCallers(q, path, definition, depth) {
  if (depth < 2) return [];
  const walk = await reachCalls(
    (cypher, params) => rows(q, cypher, params),
    await nodesOf(q, path, definition),
    "callers",
    depth,
    WALK_LIMIT,
    definition.kind === "class" ? "Class" : "Function"
  );
  return walk.reached.filter((fn) => fn.hops >= 2).map((fn) => ({
    relation: "caller",
    name: fn.name,
    path: fn.path,
    line: fn.line,
    hops: fn.hops,
    possible: fn.possible === void 0 ? void 0 : `through ${fn.possible}`
  }));
}
async function subclasses(q, path, name, depth) {
  const found = await rows(
    q,
    `MATCH p = (s:Class)-[:INHERITS*1..${depth}]->(c:Class) WHERE c.name = $name AND c.path = $path RETURN s.name AS name, s.path AS path, s.line_number AS line, min(length(p)) AS hops ORDER BY hops, path, line`,
    { name, path }
  );
  return found.map((row) => ({
    relation: "subclass",
    name: str(row.name),
    path: str(row.path),
    line: num(row.line),
    hops: Number(row.hops)
  }));
}
async function overriders(q, path, definition, depth) {
  if (!definition.owner) return [];
  const found = await rows(
    q,
    `MATCH p = (s:Class)-[:INHERITS*1..${depth}]->(c:Class) WHERE c.name = $owner AND c.path = $path WITH s, min(length(p)) AS hops MATCH (s)-[:CONTAINS]->(m:Function) WHERE m.name = $name RETURN s.name AS owner, m.path AS path, m.line_number AS line, hops ORDER BY hops, path, line`,
    { owner: definition.owner, name: definition.name, path }
  );
  return found.map((row) => ({
    relation: "overrider",
    name: `${str(row.owner)}.${definition.name}`,
    path: str(row.path),
    line: num(row.line),
    hops: Number(row.hops)
  }));
}
async function importersOf(q, path) {
  const { stem, dotted } = moduleStem(q.session.root, path);
  const found = await rows(
    q,
    "MATCH (file:File)-[r:IMPORTS]->(m:Module) WHERE file.path STARTS WITH $root AND (m.name = $stem OR m.name ENDS WITH $dotStem OR m.name ENDS WITH $slashStem OR m.name = $dotted) RETURN file.path AS path, m.name AS module, r.imported_name AS imported, r.line_number AS line",
    { root: under(q.session.root), stem, dotStem: `.${stem}`, slashStem: `/${stem}`, dotted: dotted ?? stem }
  );
  return found.filter((row) => str(row.path) !== path && importNames(q.session.root, str(row.path), str(row.module), path)).map((row) => ({ path: str(row.path), line: num(row.line), imported: str(row.imported) }));
}
function callSitesIn(path, text, name, method) {
  const code = codeOnly(path, text);
  const escaped = name.replace(/[$]/g, "\\$");
  const call = new RegExp(`${method ? "\\." : "(?<![\\w$])"}${escaped}\\s*\\(`, "g");
  const definition = new RegExp(`\\b(def|function|class)\\s+${escaped}\\b`);
  const lines = [];
  const codeLines = code.split("\n");
  for (const [index, line] of codeLines.entries()) {
    call.lastIndex = 0;
    if (call.test(line) && !definition.test(line)) lines.push(index + 1);
  }
  return lines;
}
async function enclosing(q, paths) {
  if (paths.length === 0) return () => ({ name: "<module>" });
  const found = await rows(
    q,
    "MATCH (f:Function) WHERE f.path IN $paths RETURN f.name AS name, f.path AS path, f.line_number AS line, f.end_line AS last",
    { paths }
  );
  return (path, line) => {
    let best;
    for (const row of found) {
      if (row.path !== path || str(row.name) === "<module>") continue;
      const from = num(row.line) ?? 0;
      const to = num(row.last) ?? from;
      if (line >= from && line <= to && (!best || from >= (num(best.line) ?? 0))) best = row;
    }
    return best ? { name: str(best.name), line: num(best.line) } : { name: "<module>" };
  };
}
async function callersOfGone(q, path, definition, depth) {
  const ownerOrName = definition.owner ?? definition.name;
  const importers = await importersOf(q, path);
  const files = [
    ...new Set(
      importers.filter(
        (entry) => entry.imported === "" || entry.imported === ownerOrName || entry.imported === "*" || !definition.owner
      ).map((entry) => entry.path)
    )
  ].sort();
  const sites = [];
  for (const file of files) {
    let text;
    try {
      text = readFileSync(file, "utf8");
    } catch {
      continue;
    }
    for (const line of callSitesIn(file, text, definition.name, definition.kind === "method"))
      sites.push({ path: file, line });
  }
  const around = await enclosing(q, [...new Set(sites.map((site) => site.path))]);
  const why = definition.kind === "method" ? `a call of .${definition.name}() in a file that imports ${ownerOrName}'s module; the object's type is unknown` : void 0;
  const direct = sites.map((site) => ({
    relation: "caller",
    name: around(site.path, site.line).name,
    path: site.path,
    line: site.line,
    hops: 1,
    possible: why
  }));
  if (depth < 2) return direct;
  const further = [];
  const followed = /* @__PURE__ */ new Set();
  for (const site of sites) {
    const fn = around(site.path, site.line);
    const key = `${site.path}\0${fn.name}`;
    if (fn.name === "<module>" || followed.has(key) || followed.size >= FOLLOW_LIMIT) continue;
    followed.add(key);
    const deeper = await transitiveCallers(
      q,
      site.path,
      { kind: "function", name: fn.name, params: "", line: fn.line ?? 0 },
      depth
    );
    const first = await graphCallers(q, site.path, { kind: "function", name: fn.name, params: "", line: 0 });
    const through = why === void 0 ? void 0 : `through ${fn.name} \u2192 ${definition.name}: ${why}`;
    for (const dependent of [
      ...first.callers.map((d) => ({ ...d, hops: 2 })),
      ...deeper.map((d) => ({ ...d, hops: d.hops + 1 }))
    ])
      if (dependent.hops <= depth) further.push({ ...dependent, possible: dependent.possible ?? through });
  }
  return [...direct, ...further];
}
async function dependentsOf(q, path, change, depth, changed, callersOnly = false) {
  return (await dependencies(q, path, change, depth, changed, callersOnly)).dependents;
}
async function dependencies(q, path, change, depth, changed, callersOnly = false) {
  if (!breaking(change)) return { dependents: [] };
  const definition = targetOf(change);
  const gone = change.change !== "params";
  const found = [];
  let unknown;
  const isConstructor = definition.kind === "method" && (definition.name === "__init__" || definition.name === "constructor");
  if (gone) found.push(...await callersOfGone(q, path, change.before, callersOnly ? 1 : depth));
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
        ...(await graphCallers(q, path, { kind: "class", name: definition.owner, params: "", line: 0 })).callers
      );
    if (!callersOnly) found.push(...await transitiveCallers(q, path, definition, depth));
  }
  if (!callersOnly) {
    if (definition.kind === "class") {
      const name = (change.before ?? definition).name;
      found.push(...await subclasses(q, path, name, depth));
      const importers = await importersOf(q, path);
      for (const entry of importers)
        if (entry.imported === name)
          found.push({ relation: "importer", name: basename(entry.path), path: entry.path, line: entry.line, hops: 1 });
    } else if (definition.kind === "method") {
      found.push(...await overriders(q, path, change.before ?? definition, depth));
    }
  }
  const seen = /* @__PURE__ */ new Set();
  const dependents = found.filter((dependent) => {
    const key = `${dependent.relation}\0${dependent.path}\0${dependent.line}\0${dependent.name}`;
    if (seen.has(key) || inChangedLines(changed, dependent.path, dependent.line)) return false;
    if (dependent.path === path && dependent.name === definition.name && dependent.line === definition.line)
      return false;
    seen.add(key);
    return true;
  });
  return { dependents, unknown };
}
function fileChanges(path, before, after) {
  return signatureChanges(definitionsOf(path, before ?? ""), definitionsOf(path, after ?? ""));
}
function readText(path) {
  try {
    return readFileSync(path, "utf8");
  } catch {
    return void 0;
  }
}
var RELATION_HEADINGS = {
  caller: "callers",
  importer: "importers",
  subclass: "subclasses",
  overrider: "overriders"
};
function renderImpacts(ctx, impacts, edited, depth) {
  const lines = [];
  for (const { path, change, dependents, unknown: unknown2 } of impacts) {
    const at = location(ctx.cwd, path, targetOf(change).line);
    lines.push("", `${at}  ${describeChange(change)}`);
    if (!breaking(change)) {
      lines.push("  new: nothing depends on it yet.");
      continue;
    }
    if (dependents.length === 0) {
      lines.push(
        unknown2 === void 0 ? `  nothing outside the changed lines depends on it (within ${count(depth, "link")}).` : `  the graph links nothing outside the changed lines to it (within ${count(depth, "link")}); possible callers unknown (below).`
      );
      continue;
    }
    const listing = (dependent, relation) => {
      const hops = dependent.hops > 1 ? `  (${count(dependent.hops, relation === "caller" ? "call" : "link")} away)` : "";
      const mark = edited.has(dependent.path) ? "  [edited in this session]" : "";
      const possible = dependent.possible === void 0 ? "" : `  [possible: ${dependent.possible}]`;
      return `  - ${location(ctx.cwd, dependent.path, dependent.line)}  ${dependent.name}${hops}${mark}${possible}`;
    };
    for (const relation of ["caller", "importer", "subclass", "overrider"]) {
      const group = dependents.filter((dependent) => dependent.relation === relation).sort((a, b) => a.hops - b.hops);
      const sure = group.filter((dependent) => dependent.possible === void 0);
      if (sure.length > 0) lines.push(`  ${RELATION_HEADINGS[relation]} (${sure.length}):`);
      for (const dependent of sure) lines.push(listing(dependent, relation));
      const loose = group.filter((dependent) => dependent.possible !== void 0);
      if (loose.length === 0) continue;
      lines.push(`  possible ${RELATION_HEADINGS[relation]} (${loose.length}; not confirmed, each says why):`);
      for (const dependent of loose) lines.push(listing(dependent, relation));
    }
  }
  const unknown = impacts.find((impact) => impact.unknown !== void 0)?.unknown;
  if (unknown !== void 0) lines.push("", unknownLine(unknown));
  return lines;
}
function impactTool(deps) {
  return defineTool({
    name: IMPACT_TOOL_NAME,
    label: "cgc impact",
    description: "What the uncommitted changes of the working tree can break, from git's diff against HEAD and the code graph: each function, class or method added, removed, renamed or with another parameter list, and its callers, importers, subclasses and overriders outside the changed lines, to a depth, as path:line (possible callers apart, each marked with why; those in files edited in this session are marked). Use it before finishing a change that touches a signature.",
    parameters: Type.Object({
      target: Type.Optional(
        Type.String({
          description: "Only this symbol (function, class or method name) or this file (a path in the workspace)"
        })
      ),
      depth: Type.Optional(
        Type.Integer({
          minimum: 1,
          maximum: IMPACT_MAX_DEPTH,
          description: `How many links of callers and subclasses to follow (default ${IMPACT_DEFAULT_DEPTH}, at most ${IMPACT_MAX_DEPTH})`
        })
      )
    }),
    async execute(_id, params, signal, _update, ctx) {
      return answer(deps, signal, async (session) => {
        const depth = params.depth ?? IMPACT_DEFAULT_DEPTH;
        const q = { deps, session, signal };
        const changes = await workingChanges(session.root, signal);
        if (!changes.ok) {
          throw new ToolFailure(
            "UNAVAILABLE",
            `cannot compare the working tree with HEAD: ${changes.reason}`,
            "cgc_impact needs a git repository with a commit; for one function's callers use cgc_relations."
          );
        }
        let files = changes.value.filter(
          (file) => supportedSource(file.path) && file.path.startsWith(under(session.root))
        );
        let symbol;
        const target = params.target?.replace(/^@/, "").trim();
        if (target) {
          const asFile = /[/\\]/.test(target) || supportedSource(target);
          if (asFile) {
            const confined = confinedPath(ctx.cwd, target, [session.root]);
            if (confined instanceof ToolFailure) throw confined;
            files = files.filter((file) => file.path === confined);
            if (files.length === 0)
              return `${location(ctx.cwd, confined, void 0)} has no uncommitted change to a definition cgc_impact reads (Python, TypeScript, JavaScript).`;
          } else symbol = target;
        }
        const changed = new Map(
          changes.value.map((file) => [
            file.path,
            file.status === "deleted" ? [[1, Number.MAX_SAFE_INTEGER]] : file.lines
          ])
        );
        const impacts = [];
        for (const file of files) {
          const before = file.status === "added" ? "" : await headText(session.root, file.path, signal);
          const after = file.status === "deleted" ? "" : readText(file.path);
          for (const change of fileChanges(file.path, before, after)) {
            if (symbol && ![change.name, change.from, qualified(change)].includes(symbol)) continue;
            impacts.push({ path: file.path, change, ...await dependencies(q, file.path, change, depth, changed) });
          }
        }
        if (impacts.length === 0) return nothingChanged(q, ctx, symbol, files);
        const breakingCount = impacts.filter((impact) => breaking(impact.change)).length;
        const all = impacts.flatMap((impact) => impact.dependents);
        const possible = all.filter((dependent) => dependent.possible !== void 0).length;
        const fileCount = new Set(impacts.map((impact) => impact.path)).size;
        const dependents = count(all.length - possible, "dependent") + (possible > 0 ? ` and ${count(possible, "possible caller")}` : "");
        return [
          `${count(impacts.length, "changed definition")} in ${count(fileCount, "file")} against HEAD (${breakingCount} that can break callers; ${dependents} within ${count(depth, "link")}):`,
          ...renderImpacts(ctx, impacts, deps.edited(), depth)
        ].join("\n");
      });
    }
  });
}
async function nothingChanged(q, ctx, symbol, files) {
  if (!symbol) {
    return files.length === 0 ? "No uncommitted change to Python, TypeScript or JavaScript files against HEAD." : `No definition was added, removed, renamed or given other parameters in ${count(files.length, "changed file")} (${files.slice(0, 5).map((file) => location(ctx.cwd, file.path, void 0)).join(", ")}${files.length > 5 ? ", \u2026" : ""}): edits inside bodies change no signature.`;
  }
  const known = await rows(
    q,
    "OPTIONAL MATCH (f:Function) WHERE f.name = $name AND f.path STARTS WITH $root WITH count(f) AS functions OPTIONAL MATCH (c:Class) WHERE c.name = $name AND c.path STARTS WITH $root RETURN functions, count(c) AS classes",
    { name: symbol, root: under(q.session.root) }
  );
  const row = known[0] ?? {};
  if (Number(row.functions ?? 0) + Number(row.classes ?? 0) === 0) {
    throw new ToolFailure(
      "NOT_FOUND",
      `no function, class or method named "${symbol}" in the graph of ${q.session.root}, and no uncommitted change to one`,
      "check the spelling with cgc_find, or call cgc_impact without a target to see every change."
    );
  }
  return `${symbol} has no uncommitted change to its name or parameters against HEAD; for its callers as they are, use cgc_relations.`;
}
export {
  IMPACT_DEFAULT_DEPTH,
  IMPACT_MAX_DEPTH,
  breaking,
  callSitesIn,
  dependencies,
  dependentsOf,
  fileChanges,
  impactTool,
  importNames,
  noteWorthy
};
