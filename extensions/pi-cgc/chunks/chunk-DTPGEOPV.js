import {
  readCgcDotEnv
} from "./chunk-K7T5KA4E.js";
import {
  parseQueryJson
} from "./chunk-AN223M6Q.js";

// src/workspace/tree.ts
import { createHash } from "node:crypto";
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { basename, dirname, extname, join, relative, sep } from "node:path";
import ignore from "ignore";
var DEFAULT_IGNORED_DIRS = new Set(
  "node_modules,venv,.venv,env,.env,dist,build,target,out,.git,.idea,.vscode,__pycache__".split(",")
);
function cgcIgnoredDirs(env) {
  const setting = env.IGNORE_DIRS ?? readCgcDotEnv(env).IGNORE_DIRS;
  if (setting === void 0) return DEFAULT_IGNORED_DIRS;
  return new Set(
    setting.split(",").map((name) => name.trim().toLowerCase()).filter(Boolean)
  );
}
var SOURCE_EXTENSIONS = new Set(
  ".py .ipynb .js .jsx .mjs .cjs .ts .mts .cts .tsx .go .rs .c .h .cc .cpp .hpp .hh .java .rb .cs .php .kt .kts .scala .sc .swift .hs .dart .pl .pm .lua .ex .exs .el .html .css .sol .svelte .vue .tf .hcl .gradle".split(" ")
);
var GENERIC_EXTENSIONS = new Set(".toml .sh .yaml .yml .json .ini .cfg .md .txt .bat .ps1".split(" "));
var GENERIC_FILENAMES = /* @__PURE__ */ new Set(["Dockerfile", "Makefile", ".gitignore", ".dockerignore", ".env"]);
function isSourcePath(path) {
  return SOURCE_EXTENSIONS.has(extname(path));
}
function isIndexedPath(path) {
  const extension = extname(path);
  return SOURCE_EXTENSIONS.has(extension) || GENERIC_EXTENSIONS.has(extension) || GENERIC_FILENAMES.has(basename(path));
}
var IGNORE_FILES = /* @__PURE__ */ new Set([".cgcignore", ".gitignore"]);
function isTrackedPath(root, path) {
  return isIndexedPath(path) || isIgnoreFile(root, path);
}
var RECENT_MS = 2e3;
function stampPath(path, previous) {
  let stats;
  try {
    stats = statSync(path);
  } catch {
    return void 0;
  }
  if (!stats.isFile()) return void 0;
  const times = `${stats.size}:${stats.mtimeMs}:${stats.ctimeMs}:${stats.ino}`;
  const recent = Math.max(stats.mtimeMs, stats.ctimeMs) >= Date.now() - RECENT_MS;
  if (!recent && !previous?.startsWith(`${times}:`)) return times;
  try {
    return `${times}:${createHash("sha1").update(readFileSync(path)).digest("base64")}`;
  } catch {
    return void 0;
  }
}
var CLOCK_SLACK_MS = 1e3;
function lastTouched(path) {
  try {
    const stats = statSync(path);
    return Math.max(stats.mtimeMs, stats.ctimeMs);
  } catch {
    return void 0;
  }
}
function stampTime(stamp) {
  const [, mtime, ctime] = stamp.split(":");
  return Math.max(Number(mtime), Number(ctime));
}
function snapshotTree(root, previous, skippedDirs = DEFAULT_IGNORED_DIRS) {
  const snapshot = /* @__PURE__ */ new Map();
  const ignored = ignoreRules(root);
  const stack = [[root, ""]];
  while (stack.length > 0) {
    const [dir, relativeDir] = stack.pop();
    let entries;
    try {
      entries = readdirSync(dir, { withFileTypes: true });
    } catch {
      continue;
    }
    for (const entry of entries) {
      const path = join(dir, entry.name);
      const relativePath = relativeDir + entry.name;
      if (dir === root && entry.isFile() && IGNORE_FILES.has(entry.name)) {
        const stamp = stampPath(path, previous?.get(path));
        if (stamp !== void 0) snapshot.set(path, stamp);
        continue;
      }
      if (entry.isDirectory()) {
        if (!skippedDirs.has(entry.name.toLowerCase()) && !ignored?.(`${relativePath}/`))
          stack.push([path, `${relativePath}/`]);
      } else if (entry.isFile() && isIndexedPath(entry.name) && !ignored?.(relativePath)) {
        const stamp = stampPath(path, previous?.get(path));
        if (stamp !== void 0) snapshot.set(path, stamp);
      }
    }
  }
  return snapshot;
}
function walkedByCgc(root, skippedDirs = DEFAULT_IGNORED_DIRS) {
  const ignored = ignoreRules(root);
  return (path) => {
    const parts = relative(root, path).split(sep);
    if (parts[0] === ".." || !isIndexedPath(path)) return false;
    for (let depth = 1; depth < parts.length; depth++) {
      const folder = parts[depth - 1];
      if (skippedDirs.has(folder.toLowerCase()) || ignored?.(`${parts.slice(0, depth).join("/")}/`)) return false;
    }
    return !ignored?.(parts.join("/"));
  };
}
var DEFAULT_PATTERNS = [
  ..."node_modules/ venv/ .venv/ env/ .env/ dist/ build/ target/ out/ obj/ .git/ __pycache__/".split(" "),
  ..."*.png *.jpg *.jpeg *.gif *.svg *.mp4 *.mp3 *.zip *.tar *.gz".split(" ")
];
function ignoreRules(root) {
  const lines = [...DEFAULT_PATTERNS];
  for (const name of [".gitignore", ".cgcignore"]) {
    const found = nearestUpToWorktree(root, name);
    if (found === void 0) continue;
    try {
      lines.push(...readFileSync(found, "utf8").split("\n"));
    } catch {
    }
  }
  const patterns = lines.map((line) => line.trim()).filter((line) => line !== "" && !line.startsWith("#"));
  if (patterns.some((line) => line.startsWith("!"))) return void 0;
  const key = patterns.join("\n");
  let test = knownRules.get(key);
  if (test === void 0) {
    const rules = ignore({ ignorecase: false }).add(patterns);
    test = (relativePath) => rules.ignores(relativePath);
    if (knownRules.size >= KNOWN_RULES_MAX) knownRules.delete(knownRules.keys().next().value);
    knownRules.set(key, test);
  }
  return test;
}
var knownRules = /* @__PURE__ */ new Map();
var KNOWN_RULES_MAX = 8;
function nearestUpToWorktree(root, name) {
  let top;
  for (let probe = root; ; probe = dirname(probe)) {
    if (existsSync(join(probe, ".git"))) {
      top = probe;
      break;
    }
    if (dirname(probe) === probe) break;
  }
  for (let dir = root; ; dir = dirname(dir)) {
    if (existsSync(join(dir, name))) return join(dir, name);
    if (top === void 0 || dir === top || dirname(dir) === dir) return void 0;
  }
}
function changedBetween(before, after) {
  const changed = [];
  for (const [path, stamp] of after) if (before.get(path) !== stamp) changed.push(path);
  for (const path of before.keys()) if (!after.has(path)) changed.push(path);
  return changed.sort();
}
function isIgnoreFile(root, path) {
  return IGNORE_FILES.has(basename(path)) && dirname(path) === root;
}
function touchedAfter(snapshot, sinceMs) {
  return [...snapshot].filter(([path, stamp]) => isIndexedPath(path) && stampTime(stamp) > sinceMs).map(([path]) => path).sort();
}

// src/cgc/graph-checks.ts
function cypherString(value) {
  return `'${value.replace(/\\/g, "\\\\").replace(/'/g, "\\'")}'`;
}
function uncontainedQuery(root) {
  const under = cypherString(`${root}/`);
  return `MATCH (n:Function) WHERE n.path STARTS WITH ${under} AND NOT ()-[:CONTAINS]->(n) RETURN count(n) AS functions UNION ALL MATCH (n:Class) WHERE n.path STARTS WITH ${under} AND NOT ()-[:CONTAINS]->(n) RETURN count(n) AS functions`;
}
var UNCONTAINED_REASON = (count) => `cgc left ${count === 1 ? "1 function or class" : `${count} functions and classes`} that no file contains, which a full index does not (on FalkorDB Lite this is a known fault of cgc 0.6.13's index after the first: see pi-cgc's docs/cgc-compat.md)`;
async function readBack(runner, root, query) {
  const check = await runner.run(["query", query], { kind: "query", cwd: root });
  if (check.code !== "OK") return { kind: "unknown", reason: `${check.code}: ${check.reason}` };
  const rows = parseQueryJson(check.stdout);
  if (rows.kind !== "ok") return { kind: "unknown", reason: `cgc's answer could not be read: ${rows.reason}` };
  return { kind: "ok", value: rows.value };
}
async function uncontainedCount(runner, root) {
  const rows = await readBack(runner, root, uncontainedQuery(root));
  if (rows.kind !== "ok") return rows;
  const count = rows.value.reduce((sum, row) => sum + Number(row.functions ?? 0), 0);
  return { kind: "ok", value: count };
}

export {
  cgcIgnoredDirs,
  isSourcePath,
  isIndexedPath,
  isTrackedPath,
  stampPath,
  CLOCK_SLACK_MS,
  lastTouched,
  stampTime,
  snapshotTree,
  walkedByCgc,
  changedBetween,
  isIgnoreFile,
  touchedAfter,
  cypherString,
  UNCONTAINED_REASON,
  readBack,
  uncontainedCount
};
