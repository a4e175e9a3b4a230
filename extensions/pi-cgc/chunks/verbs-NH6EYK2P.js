import {
  cgcInterpreter,
  chipText,
  describeLiteNetwork,
  differingFiles,
  engineFile,
  formatElapsed
} from "./chunk-EA6Y62K6.js";
import {
  count
} from "./chunk-U43P4R4X.js";
import {
  describeWatcher,
  watcherOf
} from "./chunk-N2SMOQGM.js";
import {
  CONFIG_KEYS,
  CONFIG_KEY_NAMES,
  describeSource,
  isConfigKey,
  isPlainObject
} from "./chunk-F77Q226V.js";
import {
  describeBackend,
  shownBackend
} from "./chunk-EM356YHV.js";
import "./chunk-K7T5KA4E.js";
import {
  indexResumed,
  indexSkipped
} from "./chunk-AN223M6Q.js";

// src/ui/verbs.ts
import { existsSync as existsSync2 } from "node:fs";
import { join } from "node:path";

// src/cgc/index-cost.ts
import { execFile } from "node:child_process";
var DISCOVER_SCRIPT = engineFile("discover.py");
var INDEX_RATES = {
  kuzudb: { startMs: 5e3, perKiBMs: 76 },
  falkordb: { startMs: 4e3, perKiBMs: 8 },
  "falkordb-remote": { startMs: 2e3, perKiBMs: 6 },
  neo4j: { startMs: 18e3, perKiBMs: 24 }
};
var PI_CGC_INDEX_RATES = {
  kuzudb: { startMs: 700, perKiBMs: 1.9 },
  falkordb: { startMs: 500, perKiBMs: 2.1 },
  "falkordb-remote": { startMs: 300, perKiBMs: 1.85 },
  neo4j: { startMs: 4700, perKiBMs: 3.1 }
};
function estimateIndex(found, backend, indexer = "cgc") {
  const rates = indexer === "pi-cgc" ? PI_CGC_INDEX_RATES : INDEX_RATES;
  const measured = backend !== void 0 && backend in rates;
  const rate = rates[measured ? backend : "kuzudb"];
  const estimateMs = Math.round(rate.startMs + rate.perKiBMs * found.bytes / 1024);
  return { ...found, indexer, backend: measured ? backend : void 0, estimateMs };
}
function roughly(ms) {
  const step = ms < 6e4 ? 5e3 : ms < 6e5 ? 3e4 : 3e5;
  return `about ${formatElapsed(Math.max(step, Math.round(ms / step) * step))}`;
}
function describeIndexCost(cost) {
  const rate = cost.backend ? `on ${cost.backend}` : "on this backend (its rate not measured: K\xF9zuDB's used)";
  const who = cost.indexer === "pi-cgc" ? "pi-cgc's index" : "cgc";
  let text = `${who} will read ${count(cost.files, "file")}, ${size(cost.bytes)}: ${roughly(cost.estimateMs)} ${rate}, at the rates pi-cgc measured (machines differ).`;
  if (cost.backend === "kuzudb" && cost.estimateMs > 5 * 6e4) {
    const server = estimateIndex(cost, "falkordb-remote", cost.indexer).estimateMs;
    text += ` A FalkorDB server indexes about ten times faster (${roughly(server)} here): cgc uses one when DEFAULT_DATABASE=falkordb-remote and FALKORDB_HOST name it.`;
  }
  return text;
}
function size(bytes) {
  return bytes < 1024 * 1024 ? `${Math.max(1, Math.round(bytes / 1024))} KiB` : `${(bytes / 1024 / 1024).toFixed(1)} MiB`;
}
function countIndexFiles(python, root, env, budgetMs = 15e3) {
  return new Promise((settle) => {
    execFile(
      python,
      [DISCOVER_SCRIPT, root],
      { cwd: root, env, timeout: budgetMs, killSignal: "SIGKILL", maxBuffer: 1 << 20 },
      (error, stdout) => {
        const line = stdout.trim().split("\n").at(-1) ?? "";
        try {
          const parsed = JSON.parse(line);
          if (typeof parsed.files === "number" && typeof parsed.bytes === "number")
            return settle({ files: parsed.files, bytes: parsed.bytes });
          return settle({ error: String(parsed.error ?? error?.message ?? "no count") });
        } catch {
          return settle({ error: error?.killed ? `no count within ${budgetMs} ms` : error?.message ?? "no count" });
        }
      }
    );
  });
}

// src/ui/settings.ts
import { getSettingsListTheme } from "@mariozechner/pi-coding-agent";
import { Container, Input, SettingsList, Text } from "@mariozechner/pi-tui";

// src/config/save.ts
import { existsSync, mkdirSync, readFileSync, renameSync, rmdirSync, statSync, writeFileSync } from "node:fs";
import { dirname } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
async function saveConfigValue(path, name, raw) {
  const parsed = CONFIG_KEYS[name].type.parse(raw);
  if (!parsed.ok) return { ok: false, error: `${name}: ${parsed.error}` };
  mkdirSync(dirname(path), { recursive: true });
  return withFileLock(path, () => replaceKey(path, name, parsed.value));
}
var LOCK_WAIT_MS = 5e3;
var LOCK_STALE_MS = 1e4;
async function withFileLock(path, work) {
  const lock = `${path}.lock`;
  const deadline = Date.now() + LOCK_WAIT_MS;
  for (; ; ) {
    try {
      mkdirSync(lock);
      break;
    } catch (error) {
      if (error.code !== "EEXIST") {
        return { ok: false, error: `cannot save ${path}: ${error.message}` };
      }
      if (isStale(lock)) continue;
      if (Date.now() > deadline) return { ok: false, error: `${path} is being saved by another process; try again` };
      await sleep(5 + Math.random() * 20);
    }
  }
  try {
    return work();
  } finally {
    rmdirSync(lock);
  }
}
function isStale(lock) {
  try {
    if (Date.now() - statSync(lock).mtimeMs < LOCK_STALE_MS) return false;
    rmdirSync(lock);
    return true;
  } catch {
    return true;
  }
}
function replaceKey(path, name, value) {
  let data = {};
  if (existsSync(path)) {
    let existing;
    try {
      existing = JSON.parse(readFileSync(path, "utf8"));
    } catch (error) {
      return { ok: false, error: `${path} is not valid JSON (${error.message}); fix it before saving` };
    }
    if (!isPlainObject(existing)) return { ok: false, error: `${path} does not hold a JSON object; not saved` };
    data = existing;
  }
  setKey(data, name, value);
  const temp = `${path}.${process.pid}.${Date.now()}.${Math.random().toString(36).slice(2)}.tmp`;
  writeFileSync(temp, `${JSON.stringify(data, null, 2)}
`);
  renameSync(temp, path);
  return { ok: true, path };
}
function setKey(data, name, value) {
  if (Object.hasOwn(data, name)) {
    data[name] = value;
    return;
  }
  const parts = name.split(".");
  let node = data;
  for (const part of parts.slice(0, -1)) {
    if (!isPlainObject(node[part])) node[part] = {};
    node = node[part];
  }
  node[parts[parts.length - 1]] = value;
}

// src/ui/settings.ts
var SAVE_PROJECT = "Save to project";
var SAVE_GLOBAL = "Save to global";
var DISCARD = "Discard changes";
function formatValue(name, value) {
  return CONFIG_KEYS[name].type.format(value);
}
function settingItems(loaded) {
  return CONFIG_KEY_NAMES.map((name) => {
    const def = CONFIG_KEYS[name];
    const source = loaded.sources[name];
    const current = formatValue(name, loaded.values[name]);
    if (source.kind === "env") {
      return {
        id: name,
        label: name,
        currentValue: `${current} (env)`,
        description: `${def.doc} Set by ${source.variable}; read-only here \u2014 unset the variable to change it.`
      };
    }
    return {
      id: name,
      label: name,
      currentValue: current,
      description: `${def.doc} Source: ${describeSource(source)}.`,
      ...def.type.options ? { values: [...def.type.options] } : { submenu: inputSubmenu(name) }
    };
  });
}
function inputSubmenu(name) {
  return (currentValue, done) => {
    const input = new Input();
    input.setValue(currentValue);
    input.onSubmit = (value) => done(value.trim());
    input.onEscape = () => done(void 0);
    const container = new Container();
    container.addChild(new Text(`${name} (${CONFIG_KEYS[name].type.label}) \u2014 enter to accept, esc to cancel`));
    container.addChild(input);
    return {
      render: (width) => container.render(width),
      invalidate: () => container.invalidate(),
      handleInput: (data) => input.handleInput(data)
    };
  };
}
async function openSettings(ctx, loaded) {
  const pending = /* @__PURE__ */ new Map();
  let shown = false;
  await ctx.ui.custom((tui, theme, _keybindings, done) => {
    shown = true;
    const list = new SettingsList(
      settingItems(loaded),
      Math.min(CONFIG_KEY_NAMES.length + 2, 20),
      getSettingsListTheme(),
      (id, value) => {
        if (!isConfigKey(id)) return;
        const parsed = CONFIG_KEYS[id].type.parse(value);
        if (!parsed.ok) {
          ctx.ui.notify(`${id} = ${JSON.stringify(value)} not accepted: ${parsed.error}`, "warning");
          list.updateValue(id, pending.get(id) ?? formatValue(id, loaded.values[id]));
          return;
        }
        pending.set(id, formatValue(id, parsed.value));
      },
      () => done(void 0),
      { enableSearch: true }
    );
    const container = new Container();
    container.addChild(new Text(theme.fg("accent", theme.bold("pi-cgc settings"))));
    container.addChild(list);
    return {
      render: (width) => container.render(width),
      invalidate: () => container.invalidate(),
      handleInput: (data) => {
        list.handleInput(data);
        tui.requestRender();
      }
    };
  });
  if (!shown) return "no-tui";
  if (pending.size === 0) return "none";
  const summary = [...pending].map(([name, value]) => `${name} = ${value}`).join(", ");
  const choice = await ctx.ui.select(`Save ${summary}?`, [
    `${SAVE_PROJECT} (${loaded.projectPath})`,
    `${SAVE_GLOBAL} (${loaded.globalPath})`,
    DISCARD
  ]);
  if (!choice || choice === DISCARD) return "none";
  const path = choice.startsWith(SAVE_PROJECT) ? loaded.projectPath : loaded.globalPath;
  for (const [name, value] of pending) {
    const result = await saveConfigValue(path, name, value);
    if (!result.ok) {
      ctx.ui.notify(`Not saved: ${result.error}`, "error");
      return "none";
    }
  }
  return path;
}

// src/ui/status.ts
function renderStatus({
  state,
  root,
  backend,
  reportedBackend,
  executable,
  maintenanceRunning,
  watcher,
  engine,
  fullIndexThroughEngine,
  worktree,
  liteNetwork
}) {
  const facts = state.facts;
  const repo = facts?.repository;
  const probed = facts ? `probe at ${new Date(facts.takenAt).toISOString()} (${facts.spawns} cgc spawns)` : "no probe yet";
  const lines = [
    `pi-cgc \u2014 ${chipText(state)}`,
    `workspace:  ${root}`,
    ...worktree ? [`worktree:   ${worktree}`] : [],
    `cgc:        ${executable}${facts?.cgcVersion ? ` (${facts.cgcVersion})` : ""}`,
    `backend:    ${describeBackend(reportedBackend, backend)}`,
    ...liteNetwork ? [`tcp port:   ${liteNetwork}`] : [],
    `readiness:  ${state.readiness} \u2014 ${state.reason}`
  ];
  if (repo) {
    lines.push(
      `index:      ${repo.files ?? "?"} files, ${repo.functions ?? "?"} functions, ${repo.classes ?? "?"} classes${repo.languages?.length ? `; ${repo.languages.join(", ")}` : ""} \u2014 from the graph, ${probed}`,
      `indexed:    ${repo.indexedAt ?? "time not recorded"}${repo.commit ? ` at commit ${repo.commit.slice(0, 12)}` : ""} \u2014 recorded by cgc`
    );
  } else if (facts?.repositoryCount !== void 0) {
    lines.push(
      `index:      none for this workspace (${facts.repositoryCount} other repositories in the graph) \u2014 ${probed}`
    );
  }
  const changed = state.changedPaths.length;
  lines.push(
    `freshness:  ${state.freshness}${changed ? ` \u2014 ${count(changed, "changed file")} not yet in the graph` : ""}${state.freshness === "fresh" && state.keptByWatcher ? ` \u2014 ${WATCHED}` : ""}${state.freshness === "possibly-stale" && state.staleReason ? ` \u2014 ${state.staleReason}` : ""}${state.verifiedAt ? `; last verified ${new Date(state.verifiedAt).toISOString()}` : ""}`
  );
  if (engine) lines.push(`engine:     ${engine}`);
  if (fullIndexThroughEngine) lines.push(`full index: ${THROUGH_ENGINE}`);
  if (watcher) lines.push(`watcher:    ${watcher}`);
  if (state.otherWriter) lines.push(`other writer: ${state.otherWriter}`);
  if (state.lastError) lines.push(`last error: ${state.lastError}`);
  if (state.lastAction) {
    lines.push(
      `last action: ${state.lastAction.what} \u2014 ${state.lastAction.outcome} at ${new Date(state.lastAction.at).toISOString()}`
    );
  }
  lines.push(
    `running:    ${maintenanceRunning ? `${state.activity}${state.progress ? ` (${state.progress})` : ""}${runningFor(state)}` : "nothing"}`
  );
  return lines.join("\n");
}
var THROUGH_ENGINE = "pi-cgc's own, by its engine script (cgc's parser and resolution, the graph written in bulk); cgc's own index in that script where the engine does not write the graph, around FalkorDB Lite's range index";
var WATCHED = "watched: kept by cgc watch, whose updates nothing checks against a full index (it can leave other files' links wrong after a rename or a changed body)";
function renderConfigTable(values, sources) {
  const rows = CONFIG_KEY_NAMES.map((name) => {
    const format = CONFIG_KEYS[name].type.format;
    return `${name.padEnd(30)} ${format(values[name]).padEnd(12)} ${describeSource(sources[name])}`;
  });
  return [`${"key".padEnd(30)} ${"value".padEnd(12)} source`, ...rows].join("\n");
}
function runningFor(state) {
  if (!state.activityStartedAt) return "";
  const elapsed = formatElapsed(Date.now() - state.activityStartedAt);
  return state.estimate ? ` for ${elapsed}, estimated ${formatElapsed(state.estimate.ms)} for ${state.estimate.files} files` : ` for ${elapsed}`;
}

// src/ui/verbs.ts
async function runVerb(verb, rest, { session, ctx, show, hooks }) {
  switch (verb) {
    case "status":
      if (!session.store.get().probed || isTransient(session.store.get()) && !session.maintenanceRunning)
        await session.refresh();
      show(
        renderStatus({
          state: session.store.get(),
          root: session.root,
          backend: session.backend,
          reportedBackend: session.store.get().facts?.reportedBackend,
          executable: session.runner.executable,
          maintenanceRunning: session.maintenanceRunning,
          watcher: describeWatcher(session.config()["freshness.watch"], watcherOf(session)),
          engine: hooks.engine(),
          fullIndexThroughEngine: session.fullIndexThrough() !== void 0,
          worktree: session.worktree.describe(),
          liteNetwork: (session.store.get().facts?.reportedBackend ?? session.backend)?.name === "falkordb" ? describeLiteNetwork(session.env) : void 0
        })
      );
      return;
    case "index":
      return indexVerb(session, ctx, rest.includes("--force") || rest.includes("-f"), show);
    case "sync":
      show(await hooks.sync(ctx));
      return;
    case "doctor": {
      const result = await session.runner.run(["doctor"], { kind: "query", cwd: session.root, takesLock: false });
      const output = session.present(`${result.stderr}
${result.stdout}`.trim());
      show(`cgc doctor (${result.code}):
${output.text}`, result.code === "OK" ? "info" : "warning");
      return;
    }
    case "report":
      return reportVerb(session, ctx, show, hooks);
    case "config":
      return configVerb(session, ctx, show, hooks);
  }
}
function cgcignoreNote(root) {
  return existsSync2(join(root, ".cgcignore")) ? "" : ` cgc also writes a default ${join(root, ".cgcignore")}.`;
}
async function indexCost(session, backend) {
  const interpreter = cgcInterpreter(session.runner.executable, session.env);
  if (!interpreter.ok) return void 0;
  const counted = await countIndexFiles(interpreter.python, session.root, session.env);
  const indexer = session.fullIndexThrough() !== void 0 ? "pi-cgc" : "cgc";
  return "files" in counted ? estimateIndex(counted, backend, indexer) : void 0;
}
async function fromMainLine(session) {
  const main = session.fullIndexThrough() !== void 0 ? session.worktree.fromMain() : void 0;
  if (!main || !("root" in main)) return void 0;
  const differ = await differingFiles(main.root, session.root);
  const files = differ === void 0 ? "the files that differ" : count(differ, "file");
  return ` pi-cgc starts it from the main checkout's graph (${main.root}), its paths moved: ${files} differ, applied as one update; a full index runs instead if that graph cannot be used.`;
}
var isTransient = (state) => state.readiness === "busy" || state.readiness === "unknown";
async function indexVerb(session, ctx, force, show) {
  if (!session.store.get().probed) await session.refresh();
  const state = session.store.get();
  const backend = shownBackend(state.facts?.reportedBackend, session.backend)?.name;
  const into = backend ? `the ${backend} backend` : "cgc's configured backend";
  if (state.readiness === "unavailable") return show(`cgc is not available: ${state.reason}`, "warning");
  if (session.maintenanceRunning) return show(`cgc is already ${state.activity}; wait for it to finish.`, "warning");
  if (!force && state.readiness === "ready") {
    return show(`${session.root} is already indexed. /cgc sync refreshes changed files; /cgc index --force rebuilds.`);
  }
  const scope = session.worktree.state;
  const inContext = scope.kind === "active" ? ` in the CGC named context ${scope.name}` : "";
  const cost = await indexCost(session, backend);
  const fromMain = scope.kind === "pending" ? await fromMainLine(session) : void 0;
  const costLine = fromMain ?? (cost ? ` ${describeIndexCost(cost)}` : "");
  const confirmed = scope.kind === "pending" ? await ctx.ui.confirm(
    "Build a code graph?",
    `pi-cgc will create the CGC named context ${scope.name} for this worktree, then run cgc index on ${session.root} in it, writing a new graph into ${into}.${costLine}${cgcignoreNote(session.root)}`
  ) : force ? await ctx.ui.confirm(
    "Replace the code graph?",
    `cgc index --force deletes the existing graph of ${session.root}${inContext} (${backend ? `${backend} backend` : "cgc's configured backend"}) and rebuilds it from scratch.${costLine}`
  ) : await ctx.ui.confirm(
    "Build a code graph?",
    `pi-cgc will run cgc index on ${session.root}${inContext}, writing a new graph into ${into}.${costLine}${cgcignoreNote(session.root)}`
  );
  if (!confirmed) return show("Not indexed: the confirmation was declined.");
  const announced = session.notices.has("indexed");
  const result = await session.runMaintenance(
    force ? "rebuilding" : "indexing",
    force ? ["index", "--force", session.root] : ["index", session.root],
    "index",
    cost ? { ms: cost.estimateMs, files: cost.files } : void 0
  );
  if (result.code === "OK" && !force && indexSkipped(result.stdout)) {
    return show(
      `cgc did not index ${session.root}: it found a graph of it already there, which pi-cgc did not build, and skipped. That graph is not called fresh; /cgc index --force rebuilds it.`,
      "warning"
    );
  }
  if (result.code === "OK" && !force && indexResumed(result.stdout)) {
    return show(
      `Indexed ${session.root}, but cgc resumed a graph another run left unfinished and kept what that run wrote: possibly stale until a full rebuild (the next sync does one; /cgc index --force now).`,
      "warning"
    );
  }
  if (result.code === "OK" && !announced && session.notices.has("indexed")) return;
  show(result.code === "OK" ? `Indexed ${session.root}.` : `Indexing ended ${result.code}: ${result.reason}`);
}
async function reportVerb(session, ctx, show, hooks) {
  if (session.store.get().readiness !== "ready") return show("No graph to report on yet (see /cgc status).", "warning");
  const path = join(session.root, "CGC_REPORT.md");
  const confirmed = await ctx.ui.confirm(
    "Write a report?",
    `cgc report will write ${path} (replacing it if it exists).`
  );
  if (!confirmed) return show("No report written: the confirmation was declined.");
  const result = await session.runner.run(["report", "--output", path, "--repo", session.root], {
    kind: "query",
    cwd: session.root
  });
  hooks.written([path]);
  show(result.code === "OK" ? `Report written to ${path}.` : `cgc report ended ${result.code}: ${result.reason}`);
}
async function configVerb(session, ctx, show, hooks) {
  session.reloadConfig();
  const loaded = session.loaded;
  if (!ctx.hasUI) return show(renderConfigTable(loaded.values, loaded.sources));
  const saved = await openSettings(ctx, loaded);
  if (saved === "no-tui") return show(renderConfigTable(loaded.values, loaded.sources));
  if (saved !== "none") {
    hooks.written([saved]);
    session.reloadConfig();
    show(`Saved to ${saved}. Some settings apply from the next session (cgc.executable, timeouts).`);
  }
}
export {
  runVerb
};
