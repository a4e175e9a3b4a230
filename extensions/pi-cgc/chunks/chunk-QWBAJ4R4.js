import {
  count
} from "./chunk-U43P4R4X.js";
import {
  shownBackend
} from "./chunk-EM356YHV.js";
import {
  isReady
} from "./chunk-K7T5KA4E.js";

// src/agent/catalog.ts
var MCP_CATALOG = [
  "add_code_to_graph",
  "check_job_status",
  "list_jobs",
  "find_code",
  "analyze_code_relationships",
  "watch_directory",
  "execute_cypher_query",
  "add_package_to_graph",
  "find_dead_code",
  "calculate_cyclomatic_complexity",
  "find_most_complex_functions",
  "list_indexed_repositories",
  "delete_repository",
  "visualize_graph_query",
  "list_watched_paths",
  "unwatch_directory",
  "load_bundle",
  "search_registry_bundles",
  "get_repository_stats",
  "discover_codegraph_contexts",
  "switch_context",
  "list_graphs",
  "generate_report",
  "find_java_spring_endpoints",
  "find_java_spring_beans",
  "find_datasource_nodes",
  "simulate_metrics",
  "simulate_architectural_change",
  "analyze_architectural_evolution"
];
var INTENT_CATALOG = {
  find: "find_code",
  relations: "analyze_code_relationships",
  deadCode: "find_dead_code",
  complexity: "find_most_complex_functions",
  cypher: "execute_cypher_query",
  stats: "get_repository_stats"
};
var INTENTS = Object.keys(INTENT_CATALOG);
var GRAPH_TOOL_NAMES = {
  find: "cgc_find",
  relations: "cgc_relations",
  deadCode: "cgc_dead_code",
  complexity: "cgc_complex_functions",
  cypher: "cgc_cypher",
  stats: "cgc_stats"
};
var IMPACT_TOOL_NAME = "cgc_impact";
var GAP_TOOL_NAMES = { doctor: "cgc_doctor", contexts: "cgc_contexts", bundle: "cgc_bundle_export" };
function catalogNameOf(toolName) {
  for (const catalog of MCP_CATALOG) {
    if (toolName === catalog) return { prefix: "", catalog };
    if (toolName.endsWith(`_${catalog}`)) return { prefix: toolName.slice(0, -catalog.length), catalog };
  }
  return void 0;
}
function detectMcpTools(toolNames) {
  const groups = /* @__PURE__ */ new Map();
  for (const name of toolNames) {
    const found = catalogNameOf(name);
    if (!found) continue;
    const group = groups.get(found.prefix) ?? /* @__PURE__ */ new Map();
    if (!group.has(found.catalog)) group.set(found.catalog, name);
    groups.set(found.prefix, group);
  }
  const detected = /* @__PURE__ */ new Map();
  for (const group of groups.values()) {
    if (group.size < 2) continue;
    for (const [catalog, name] of group) if (!detected.has(catalog)) detected.set(catalog, name);
  }
  return detected;
}

// src/agent/inject.ts
var NOTE_MAX_CHARS = 600;
var STEER_TYPE = "cgc-drift-steer";
var ANNOTATION_PREFIX = "[cgc graph possibly stale:";
function coverageNote(state, root) {
  const facts = state.facts;
  if (!isReady(state) || !facts) return void 0;
  const repo = facts.repository;
  const taken = new Date(facts.takenAt).toISOString().replace(/\.\d+Z$/, "Z");
  const named = shownBackend(facts.reportedBackend, facts.backend);
  const scope = `CodeGraphContext ${facts.cgcVersion ?? "(version unknown)"}${named ? `, ${named.name} backend` : ""}`;
  const counts = repo && repo.files !== void 0 && repo.functions !== void 0 ? `${repo.files} files${repo.languages?.length ? ` (${repo.languages.join(", ")})` : ""}, ${repo.functions} functions, ${repo.classes ?? "?"} classes` : void 0;
  const recorded = repo?.indexedAt ? ` It was indexed at ${repo.indexedAt}${repo.commit ? ` (commit ${repo.commit.slice(0, 12)})` : ""}.` : "";
  const others = facts.repositoryCount && facts.repositoryCount > 1 ? ` The graph holds ${facts.repositoryCount} repositories in all.` : "";
  const body = counts ? `Code graph coverage: ${root} \u2014 ${counts}.${recorded}${others} Snapshot ${taken}; ${scope}.` : `A code graph of ${root} exists.${recorded} Snapshot ${taken}; ${scope}.`;
  return body.length <= NOTE_MAX_CHARS ? body : `${body.slice(0, NOTE_MAX_CHARS - 1)}\u2026`;
}
function driftSteer(state) {
  const changed = state.changedPaths.length;
  return `The code graph is now possibly stale: ${changed > 0 ? `${count(changed, "file")} changed since it was last verified` : "the files changed since it was last verified"}. pi-cgc syncs it when this run ends; the user can run /cgc sync.`;
}
function annotate(session, text) {
  if (!session?.config()["proactive.resultAnnotations"]) return text;
  const state = session.store.get();
  if (!isReady(state) || state.freshness !== "possibly-stale") return text;
  const changed = state.changedPaths.length;
  return `${text}
${ANNOTATION_PREFIX} ${count(changed, "changed file")} not yet in the graph; results may lag the code]`;
}
function installInjection(pi, current) {
  let steeredEpisode = 0;
  let pendingSteer;
  let streaming = false;
  pi.on("session_start", () => {
    steeredEpisode = 0;
    pendingSteer = void 0;
    const session = current();
    session?.store.subscribe((state, previous) => {
      if (!session.config()["proactive.driftSteers"] || !isReady(state)) return;
      if (state.episodes <= previous.episodes || state.episodes === steeredEpisode) return;
      steeredEpisode = state.episodes;
      const content = driftSteer(state);
      if (streaming) pi.sendMessage({ customType: STEER_TYPE, content, display: true }, { deliverAs: "steer" });
      else pendingSteer = content;
    });
  });
  pi.on("agent_start", () => {
    streaming = true;
  });
  pi.on("agent_end", () => {
    streaming = false;
  });
  pi.on("before_agent_start", (event) => {
    const session = current();
    if (!session) return;
    const state = session.store.get();
    const steer = pendingSteer;
    pendingSteer = void 0;
    const note = session.config()["proactive.sessionNote"] ? coverageNote(state, session.root) : void 0;
    const live = steer && state.freshness === "possibly-stale" ? steer : void 0;
    if (!note && !live) return;
    return {
      ...note ? { systemPrompt: `${event.systemPrompt}

${note}` } : {},
      ...live ? { message: { customType: STEER_TYPE, content: live, display: true } } : {}
    };
  });
}

// src/agent/results.ts
import { existsSync as existsSync2, realpathSync as realpathSync2 } from "node:fs";
import { basename, dirname as dirname2, isAbsolute as isAbsolute2, join as join2, relative as relative2, resolve as resolve2 } from "node:path";

// src/workspace/root.ts
import { existsSync, realpathSync } from "node:fs";
import { dirname, isAbsolute, join, relative, resolve, sep } from "node:path";
function canonical(path) {
  try {
    return realpathSync(path);
  } catch {
    return resolve(path);
  }
}
function gitToplevel(cwd) {
  let dir = canonical(cwd);
  for (; ; ) {
    if (existsSync(join(dir, ".git"))) return dir;
    const parent = dirname(dir);
    if (parent === dir) return void 0;
    dir = parent;
  }
}
function isWithin(parent, child) {
  const rel = relative(parent, child);
  return rel === "" || rel !== ".." && !rel.startsWith(`..${sep}`) && !isAbsolute(rel);
}
function resolveWorkspaceRoot(cwd, indexedPaths = [], printed = (path) => path) {
  const here = canonical(cwd);
  const known = new Set(indexedPaths);
  for (let dir = here; ; dir = dirname(dir)) {
    if (known.has(dir) || known.has(printed(dir))) return dir;
    if (dirname(dir) === dir) break;
  }
  return gitToplevel(here) ?? here;
}

// src/agent/results.ts
var ToolFailure = class extends Error {
  constructor(code, detail, remedy) {
    super(`${code}: ${detail}
Remedy: ${remedy}`);
    this.code = code;
    this.detail = detail;
    this.remedy = remedy;
  }
  code;
  detail;
  remedy;
};
var REMEDIES = {
  BUSY: "another cgc process holds the graph database; retry in a moment, or use grep/read meanwhile.",
  TIMEOUT: "narrow the question (a file, a smaller depth, a LIMIT) or raise timeouts.queryMs.",
  UNAVAILABLE: "cgc is not runnable here; the user can check /cgc status and /cgc doctor.",
  CANCELLED: "the call was cancelled; ask again if the answer is still needed.",
  FAILED: "check the arguments; if they are right, the user can run /cgc doctor."
};
function failureOf(code, detail) {
  return new ToolFailure(code, detail, REMEDIES[code]);
}
function toolResult(session, raw) {
  const shown = session.present(raw);
  return {
    content: [{ type: "text", text: annotate(session, shown.text) }],
    details: { code: "OK", truncated: shown.truncated, spillPath: shown.spillPath }
  };
}
function fail(session, failure) {
  const shown = session.present(failure.message);
  const error = new Error(annotate(session, shown.text));
  error.name = failure.code;
  throw error;
}
function liveSession(current) {
  const session = current();
  if (!session) throw new ToolFailure("UNAVAILABLE", "pi-cgc is not active in this session", "use grep and read.");
  return session;
}
async function answered(session, body) {
  try {
    return toolResult(session, await body());
  } catch (error) {
    if (error instanceof ToolFailure) fail(session, error);
    throw error;
  }
}
function displayPath(cwd, path) {
  if (!isAbsolute2(path)) return path;
  const base = canonical(cwd);
  return isWithin(base, path) ? relative2(base, path) || "." : path;
}
function location(cwd, path, line) {
  if (typeof path !== "string") return "(no path)";
  return typeof line === "number" ? `${displayPath(cwd, path)}:${line}` : displayPath(cwd, path);
}
function confinedPath(cwd, raw, roots) {
  const given = raw.replace(/^@/, "").trim();
  const remedy = `give a path inside ${roots.join(" or ")}.`;
  if (given === "" || given.split(/[\\/]/).includes("..")) {
    return new ToolFailure("NOT_ALLOWED", `path ${JSON.stringify(given)} is empty or climbs with ..`, remedy);
  }
  let existing = resolve2(cwd, given);
  const tail = [];
  while (!existsSync2(existing) && dirname2(existing) !== existing) {
    tail.unshift(basename(existing));
    existing = dirname2(existing);
  }
  const path = join2(realpathSync2(existing), ...tail);
  if (roots.some((root) => isWithin(canonical(root), path))) return path;
  return new ToolFailure("NOT_ALLOWED", `${given} resolves to ${path}, outside ${roots.join(" and ")}`, remedy);
}

export {
  canonical,
  gitToplevel,
  isWithin,
  resolveWorkspaceRoot,
  INTENT_CATALOG,
  INTENTS,
  GRAPH_TOOL_NAMES,
  IMPACT_TOOL_NAME,
  GAP_TOOL_NAMES,
  detectMcpTools,
  annotate,
  installInjection,
  ToolFailure,
  failureOf,
  liveSession,
  answered,
  displayPath,
  location,
  confinedPath
};
