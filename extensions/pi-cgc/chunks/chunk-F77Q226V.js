// src/state/ledger.ts
import { createHash } from "node:crypto";
import { appendFileSync, existsSync as existsSync2, mkdirSync, readFileSync as readFileSync2, rmSync, writeFileSync } from "node:fs";
import { dirname, join as join2 } from "node:path";

// src/config/load.ts
import { existsSync, readFileSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";

// src/config/keys.ts
var TRUE_WORDS = /* @__PURE__ */ new Set(["true", "yes", "on", "1"]);
var FALSE_WORDS = /* @__PURE__ */ new Set(["false", "no", "off", "0"]);
function parseWatchMode(raw) {
  if (typeof raw === "boolean") return { ok: true, value: raw ? "on" : "off" };
  if (typeof raw === "string") {
    const word = raw.trim().toLowerCase();
    if (TRUE_WORDS.has(word)) return { ok: true, value: "on" };
    if (FALSE_WORDS.has(word)) return { ok: true, value: "off" };
    if (word === "auto") return { ok: true, value: "auto" };
  }
  return { ok: false, error: "expected off, on or auto (or a boolean)" };
}
var booleanType = {
  label: "boolean",
  options: ["true", "false"],
  parse(raw) {
    if (typeof raw === "boolean") return { ok: true, value: raw };
    if (typeof raw === "string") {
      const word = raw.trim().toLowerCase();
      if (TRUE_WORDS.has(word)) return { ok: true, value: true };
      if (FALSE_WORDS.has(word)) return { ok: true, value: false };
    }
    return { ok: false, error: "expected true or false" };
  },
  format: String
};
function integerType(min, max) {
  return {
    label: min > 0 ? "positive integer" : "integer \u2265 0",
    parse(raw) {
      const value = typeof raw === "number" ? raw : typeof raw === "string" && /^\s*\d+\s*$/.test(raw) ? Number(raw) : NaN;
      if (!Number.isSafeInteger(value)) return { ok: false, error: `expected a whole number from ${min} to ${max}` };
      if (value < min || value > max) return { ok: false, error: `out of range (${min}\u2013${max})` };
      return { ok: true, value };
    },
    format: String
  };
}
function stringType(maxLength) {
  return {
    label: "string",
    parse(raw) {
      if (typeof raw !== "string" || raw.trim() === "") return { ok: false, error: "expected a non-empty string" };
      if (raw.length > maxLength) return { ok: false, error: `longer than ${maxLength} characters` };
      return { ok: true, value: raw.trim() };
    },
    format: (value) => value
  };
}
function enumType(options) {
  return {
    label: options.join(" \\| "),
    options,
    parse(raw) {
      const word = typeof raw === "string" ? raw.trim().toLowerCase() : void 0;
      const match = options.find((option) => option === word);
      return match ? { ok: true, value: match } : { ok: false, error: `expected one of ${options.join(", ")}` };
    },
    format: (value) => value
  };
}
var watchModeType = {
  label: "off \\| on \\| auto",
  options: ["off", "on", "auto"],
  parse: parseWatchMode,
  format: (value) => value
};
function key(def) {
  return def;
}
var MINUTE = 6e4;
var HOUR = 60 * MINUTE;
var CONFIG_KEYS = {
  "cgc.executable": key({
    type: stringType(4096),
    default: "cgc",
    env: "CGC_EXECUTABLE",
    doc: "The cgc executable: a name on PATH or an absolute path."
  }),
  "timeouts.probeMs": key({
    type: integerType(100, HOUR),
    default: 15e3,
    env: "CGC_TIMEOUTS_PROBE_MS",
    doc: "Time budget of a probe (version, doctor, the readiness query)."
  }),
  "timeouts.queryMs": key({
    type: integerType(100, HOUR),
    default: 6e4,
    env: "CGC_TIMEOUTS_QUERY_MS",
    doc: "Time budget of a graph query made for the agent or a command."
  }),
  "timeouts.maintenanceMs": key({
    type: integerType(1e3, 24 * HOUR),
    default: 30 * MINUTE,
    env: "CGC_TIMEOUTS_MAINTENANCE_MS",
    doc: "Time budget of an index, a rebuild or a sync. Once it stops one, no automatic index or sync starts until it is raised."
  }),
  "timeouts.longLivedMs": key({
    type: integerType(0, 7 * 24 * HOUR),
    default: 0,
    env: "CGC_TIMEOUTS_LONG_LIVED_MS",
    doc: "Longest life of a long-lived child (watcher, MCP server); 0 means until the session ends."
  }),
  "lifecycle.autoCreate": key({
    type: booleanType,
    default: false,
    env: "CGC_LIFECYCLE_AUTO_CREATE",
    doc: "Index an unindexed workspace in the background without asking."
  }),
  "lifecycle.syncOnStart": key({
    type: booleanType,
    default: true,
    env: "CGC_LIFECYCLE_SYNC_ON_START",
    doc: "At session start, sync when the graph's recorded commit or time differs from the repository."
  }),
  "worktree.mode": key({
    type: enumType(["off", "isolate"]),
    default: "off",
    env: "CGC_WORKTREE_MODE",
    doc: "`isolate` gives each linked git worktree its own CGC named context (`wt-<name>-<hash>`), created with the same consent as an index; on K\xF9zuDB its first index starts from the main checkout's graph where that one is current."
  }),
  "freshness.watch": key({
    type: watchModeType,
    default: "off",
    env: "CGC_FRESHNESS_WATCH",
    doc: "Run `cgc watch`: `off`, `on` (always), `auto` (server backends with an indexed workspace). Booleans map to on/off."
  }),
  "freshness.watcherLivenessMs": key({
    type: integerType(1, HOUR),
    default: 15e3,
    env: "CGC_FRESHNESS_WATCHER_LIVENESS_MS",
    doc: "How long a watcher must survive before pi-cgc leaves the graph to it (the chip then says `watched`)."
  }),
  "freshness.autoSync": key({
    type: booleanType,
    default: true,
    env: "CGC_FRESHNESS_AUTO_SYNC",
    doc: "Sync the graph at quiet moments after edits (the lazy path)."
  }),
  "freshness.engine": key({
    type: booleanType,
    default: true,
    env: "CGC_FRESHNESS_ENGINE",
    doc: "Apply edits to the graph with pi-cgc's incremental engine (cgc's own library, on the cgc versions it was proven on), about a second per edit; `false`: every sync is a full rebuild."
  }),
  "freshness.maxSyncsPerSession": key({
    type: integerType(1, 1e4),
    default: 20,
    env: "CGC_FRESHNESS_MAX_SYNCS_PER_SESSION",
    doc: "Most automatic full-rebuild syncs in one session; engine updates and `/cgc sync` are not counted."
  }),
  "engine.parseStoreMb": key({
    type: integerType(0, 1024 * 1024),
    default: 1024,
    env: "CGC_ENGINE_PARSE_STORE_MB",
    doc: "Most megabytes the engine's parse store keeps (each file's parse by its content, shared by every workspace and worktree); the least recently used go first; 0 keeps none."
  }),
  "proactive.sessionNote": key({
    type: booleanType,
    default: true,
    env: "CGC_PROACTIVE_SESSION_NOTE",
    doc: "Give the agent one short paragraph of coverage facts while the graph is ready."
  }),
  "proactive.driftSteers": key({
    type: booleanType,
    default: false,
    env: "CGC_PROACTIVE_DRIFT_STEERS",
    doc: "Tell the agent once per possibly-stale episode that the graph lags its edits."
  }),
  "proactive.resultAnnotations": key({
    type: booleanType,
    default: false,
    env: "CGC_PROACTIVE_RESULT_ANNOTATIONS",
    doc: "Append a staleness line to pi-cgc's own tool results and command output while possibly stale."
  }),
  "proactive.impactNotes": key({
    type: booleanType,
    default: false,
    env: "CGC_PROACTIVE_IMPACT_NOTES",
    doc: "After an edit changes the parameters of a function or method that other files call (or removes or renames it), name those callers (path:line) to the agent once, before its next model call."
  }),
  "output.maxBytes": key({
    type: integerType(1024, 10 * 1024 * 1024),
    default: 24 * 1024,
    env: "CGC_OUTPUT_MAX_BYTES",
    doc: "Most bytes of cgc output shown to the agent or the user; the rest is spilled to a private file."
  }),
  "output.maxLines": key({
    type: integerType(10, 1e5),
    default: 400,
    env: "CGC_OUTPUT_MAX_LINES",
    doc: "Most lines of cgc output shown to the agent or the user; the rest is spilled to a private file."
  })
};
var CONFIG_KEY_NAMES = Object.keys(CONFIG_KEYS);
function defaultConfig() {
  return Object.fromEntries(CONFIG_KEY_NAMES.map((name) => [name, CONFIG_KEYS[name].default]));
}

// src/config/load.ts
function agentDir(env = process.env) {
  const configured = env.PI_CODING_AGENT_DIR?.trim();
  if (!configured) return join(homedir(), ".pi", "agent");
  return configured === "~" || configured.startsWith("~/") ? join(homedir(), configured.slice(1)) : configured;
}
function configPaths({ cwd, env = process.env }) {
  return { globalPath: join(agentDir(env), "cgc.json"), projectPath: join(cwd, ".pi", "cgc.json") };
}
function loadConfig(locations) {
  const env = locations.env ?? process.env;
  const { globalPath, projectPath } = configPaths(locations);
  const values = defaultConfig();
  const sources = Object.fromEntries(CONFIG_KEY_NAMES.map((name) => [name, { kind: "default" }]));
  const warnings = [];
  const apply = (name, raw, source, where) => {
    if (!isConfigKey(name)) {
      warnings.push(`pi-cgc: unknown config key "${name}" in ${where} ignored`);
      return;
    }
    const parsed = CONFIG_KEYS[name].type.parse(raw);
    if (!parsed.ok) {
      warnings.push(`pi-cgc: ${name} = ${showValue(raw)} from ${where} skipped: ${parsed.error}`);
      return;
    }
    values[name] = parsed.value;
    sources[name] = source;
  };
  for (const [kind, path] of [
    ["global", globalPath],
    ["project", projectPath]
  ]) {
    const file = readConfigFile(path);
    if (file.error) warnings.push(`pi-cgc: ${file.error}`);
    for (const [name, raw] of Object.entries(file.values)) apply(name, raw, { kind, path }, path);
  }
  for (const name of CONFIG_KEY_NAMES) {
    const variable = CONFIG_KEYS[name].env;
    const raw = env[variable];
    if (raw !== void 0) apply(name, raw, { kind: "env", variable }, `environment variable ${variable}`);
  }
  return { values, sources, warnings, globalPath, projectPath };
}
function readConfigFile(path) {
  if (!existsSync(path)) return { values: {} };
  let data;
  try {
    data = JSON.parse(readFileSync(path, "utf8"));
  } catch (error) {
    return { values: {}, error: `${path} is not valid JSON (${error.message}); its settings were skipped` };
  }
  if (!isPlainObject(data)) return { values: {}, error: `${path} must hold a JSON object; its settings were skipped` };
  return { values: flatten(data) };
}
function flatten(data, prefix = "") {
  const out = {};
  for (const [name, value] of Object.entries(data)) {
    const full = prefix ? `${prefix}.${name}` : name;
    const entries = isPlainObject(value) && !isConfigKey(full) ? Object.entries(flatten(value, full)) : [[full, value]];
    for (const [key2, item] of entries) {
      Object.defineProperty(out, key2, { value: item, enumerable: true, writable: true, configurable: true });
    }
  }
  return out;
}
function isConfigKey(name) {
  return Object.hasOwn(CONFIG_KEYS, name);
}
function isPlainObject(value) {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
function showValue(raw) {
  const text = JSON.stringify(raw) ?? String(raw);
  return text.length > 80 ? `${text.slice(0, 77)}\u2026` : text;
}
function describeSource(source) {
  switch (source.kind) {
    case "default":
      return "default";
    case "global":
      return `global (${source.path})`;
    case "project":
      return `project (${source.path})`;
    case "env":
      return `env ${source.variable}`;
  }
}

// src/state/ledger.ts
var DATABASE_VARIABLES = ["HOME", "DEFAULT_DATABASE", "FALKORDB_HOST", "FALKORDB_PORT", "NEO4J_URI"];
var ENGINE_WRITTEN_ELSEWHERE = "graph-written-elsewhere";
var SLACK_MS = 2e3;
var KEEP_LINES = 200;
function graphLedger(env, root) {
  const key2 = [root, ...DATABASE_VARIABLES.map((name2) => env[name2] ?? "")].join("\0");
  const name = createHash("sha256").update(key2).digest("hex").slice(0, 24);
  const folder = join2(agentDir(env), "pi-cgc");
  const runs = join2(folder, "runs", `${name}.json`);
  const writes = join2(folder, "writes", `${name}.json`);
  const engineCacheDir = join2(folder, "engine", name);
  const runNote = () => {
    if (!existsSync2(runs)) return void 0;
    try {
      return JSON.parse(readFileSync2(runs, "utf8"));
    } catch {
      return { root, what: "index or sync", startedAt: "an unknown time", pid: 0 };
    }
  };
  const openWriteWindow = () => openWindow(writes);
  return {
    root,
    engineCacheDir,
    parseStoreDir: join2(folder, "parse-store"),
    treeFile: join2(folder, "trees", `${name}.json`),
    runNote,
    abandonedRunNote() {
      const note = runNote();
      if (note === void 0 || note.pid === 0 || note.pid === process.pid) return note;
      return pidAlive(note.pid) ? void 0 : note;
    },
    runStarted(what) {
      const before = runNote();
      const closeWindow = openWriteWindow();
      const note = { root, what, startedAt: (/* @__PURE__ */ new Date()).toISOString(), pid: process.pid };
      try {
        mkdirSync(dirname(runs), { recursive: true });
        writeFileSync(runs, `${JSON.stringify(note)}
`);
      } catch {
      }
      const settle = (outcome, ranForMs) => {
        const wroteNothing = outcome === "BUSY" || outcome === "UNAVAILABLE" || outcome === "SKIPPED";
        closeWindow(!wroteNothing);
        try {
          if (outcome === "OK" || wroteNothing && !before) rmSync(runs, { force: true });
          else if (wroteNothing) writeFileSync(runs, `${JSON.stringify(before)}
`);
          else if (outcome === "TIMEOUT")
            writeFileSync(runs, `${JSON.stringify({ ...note, timedOutAfterMs: ranForMs })}
`);
        } catch {
        }
      };
      return Object.assign(settle, { windowId: closeWindow.id });
    },
    openWriteWindow,
    writtenByPiCgc: (stampMs, except) => inWindow(writes, stampMs, except),
    writtenElsewhere() {
      try {
        mkdirSync(engineCacheDir, { recursive: true });
        writeFileSync(join2(engineCacheDir, ENGINE_WRITTEN_ELSEWHERE), `${(/* @__PURE__ */ new Date()).toISOString()}
`);
      } catch {
      }
    }
  };
}
function pidAlive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return error.code === "EPERM";
  }
}
var ownWindows = /* @__PURE__ */ new Map();
function openWindow(path) {
  const id = `${process.pid}-${Date.now()}-${Math.random().toString(36).slice(2, 8)}`;
  const append = (line) => {
    try {
      mkdirSync(dirname(path), { recursive: true });
      appendFileSync(path, `${JSON.stringify(line)}
`);
    } catch {
    }
  };
  const window = { id, from: Date.now(), pid: process.pid };
  ownWindows.set(path, [...(ownWindows.get(path) ?? []).slice(-KEEP_LINES), window]);
  append({ id, from: window.from, pid: window.pid });
  const close = (wrote = true) => {
    if (window.to !== void 0) return;
    window.to = Date.now();
    if (wrote) append({ id, to: window.to });
    else {
      ownWindows.set(
        path,
        (ownWindows.get(path) ?? []).filter((own) => own !== window)
      );
      append({ id, void: true });
    }
    compact(path);
  };
  return Object.assign(close, { id });
}
function compact(path) {
  try {
    const lines = readFileSync2(path, "utf8").split("\n").filter(Boolean);
    if (lines.length > KEEP_LINES * 2) writeFileSync(path, `${lines.slice(-KEEP_LINES).join("\n")}
`);
  } catch {
  }
}
function inWindow(path, stampMs, except) {
  const windows = new Map((ownWindows.get(path) ?? []).map((window) => [window.id, { ...window }]));
  if (existsSync2(path))
    try {
      for (const text of readFileSync2(path, "utf8").split("\n")) {
        if (!text) continue;
        const line = JSON.parse(text);
        if ("from" in line) windows.set(line.id, { from: line.from, pid: line.pid, ...windows.get(line.id) });
        else if ("void" in line) windows.delete(line.id);
        else {
          const open = windows.get(line.id);
          if (open) open.to = line.to;
        }
      }
    } catch {
    }
  if (except !== void 0) windows.delete(except);
  const now = Date.now();
  for (const window of windows.values()) {
    const to = window.to ?? (pidAlive(window.pid) ? now : window.from);
    if (stampMs >= window.from - SLACK_MS && stampMs <= to + SLACK_MS) return true;
  }
  return false;
}

export {
  CONFIG_KEYS,
  CONFIG_KEY_NAMES,
  agentDir,
  loadConfig,
  isConfigKey,
  isPlainObject,
  describeSource,
  ENGINE_WRITTEN_ELSEWHERE,
  graphLedger
};
