import {
  headText,
  keyOf,
  signature,
  supportedSource
} from "./chunks/chunk-CM7Q5FSW.js";
import {
  GAP_TOOL_NAMES,
  GRAPH_TOOL_NAMES,
  IMPACT_TOOL_NAME,
  INTENTS,
  INTENT_CATALOG,
  ToolFailure,
  annotate,
  canonical,
  detectMcpTools,
  displayPath,
  gitToplevel,
  installInjection,
  isWithin,
  resolveWorkspaceRoot
} from "./chunks/chunk-QWBAJ4R4.js";
import {
  CLOCK_SLACK_MS,
  UNCONTAINED_REASON,
  cgcIgnoredDirs,
  changedBetween,
  isIgnoreFile,
  isSourcePath,
  isTrackedPath,
  lastTouched,
  snapshotTree,
  stampPath,
  stampTime,
  touchedAfter,
  uncontainedCount,
  walkedByCgc
} from "./chunks/chunk-DTPGEOPV.js";
import {
  CHIP_KEY,
  ENGINE_SCRIPT,
  PROVEN_CGC_VERSIONS,
  acquireLiteGate,
  cgcInterpreter,
  currentMainGraph,
  engineScriptPresent,
  formatElapsed,
  installedCgcVersion,
  liteDaemonOf,
  liteHome,
  liteServerSilence,
  liteSocketOnlyEnv,
  liteSocketPath,
  mainCheckoutOf,
  mountChip,
  parseStoreArgs,
  socketAnswers,
  wholeIndexProgram
} from "./chunks/chunk-EA6Y62K6.js";
import {
  count
} from "./chunks/chunk-U43P4R4X.js";
import {
  ENGINE_WRITTEN_ELSEWHERE,
  agentDir,
  graphLedger,
  loadConfig
} from "./chunks/chunk-F77Q226V.js";
import {
  detectCgcBackend,
  holdsExclusiveLock,
  isServerBackend,
  reportedBackend,
  shownBackend
} from "./chunks/chunk-EM356YHV.js";
import {
  autoSyncCounted,
  changesObserved,
  freshnessNotVerified,
  freshnessVerified,
  graphNeedsRebuild,
  graphWrittenOutside,
  initialState,
  isReady,
  maintenanceProgress,
  maintenanceSettled,
  maintenanceStarted,
  otherWritersSeen,
  probeSettled
} from "./chunks/chunk-K7T5KA4E.js";
import {
  detectBusy,
  detectCgcFailure,
  detectDamagedDatabase,
  indexInPart,
  indexResumed,
  indexSkipped,
  parseContextCreate,
  parseContextList,
  parseQueryJson,
  parseVersion,
  richPrinted
} from "./chunks/chunk-AN223M6Q.js";

// src/agent/impact-note.ts
import { readFileSync } from "node:fs";
import { basename, dirname, join, resolve } from "node:path";
import { isEditToolResult, isWriteToolResult } from "@mariozechner/pi-coding-agent";
var IMPACT_NOTE_TYPE = "cgc-impact-note";
var NOTE_CALLERS = 8;
function readText(path) {
  try {
    return readFileSync(path, "utf8");
  } catch {
    return void 0;
  }
}
function impactLine(root, path, change, callers) {
  const file = displayPath(root, path);
  const sure = callers.filter((caller) => caller.possible === void 0);
  const loose = callers.filter((caller) => caller.possible !== void 0);
  const shownSure = sure.slice(0, NOTE_CALLERS);
  const shownLoose = loose.slice(0, NOTE_CALLERS - shownSure.length);
  const at = (shown) => shown.map((caller) => `${displayPath(root, caller.path)}:${caller.line ?? "?"}`).join(", ");
  const more = callers.length - shownSure.length - shownLoose.length;
  const tail = more > 0 ? `, and ${more} more \u2014 \`${IMPACT_TOOL_NAME}\`` : "";
  const before = change.before ? signature(change.before) : change.name;
  const what = change.change === "params" ? `\`${before}\` in ${file} now takes \`${change.after ? signature(change.after) : change.name}\`` : change.change === "renamed" ? `\`${before}\` in ${file} was renamed to \`${change.after ? signature(change.after) : change.name}\`` : `\`${before}\` was removed from ${file}`;
  const still = change.change === "params" ? "call it as before" : "use the old name";
  const notConfirmed = `(not confirmed; \`${IMPACT_TOOL_NAME}\` says why)`;
  if (sure.length === 0)
    return `${what}; ${count(loose.length, "possible call site")} in files not edited in this session ${notConfirmed}: ${at(shownLoose)}${tail}.`;
  const possible = loose.length === 0 ? "" : `; ${count(loose.length, "more possible call site")} ${notConfirmed}${shownLoose.length > 0 ? `: ${at(shownLoose)}` : ""}`;
  return `${what}; ${count(sure.length, "call site")} in files not edited in this session still ${still}: ${at(shownSure)}${possible}${tail}.`;
}
function impactNote(lines) {
  return `Impact of your last edit (pi-cgc, from the code graph): ${lines.join(" ")}`;
}
var isNote = (message) => message?.role === "custom" && message.customType === IMPACT_NOTE_TYPE;
var identity = (message) => {
  const m = message;
  return `${m.role}:${m.timestamp ?? ""}:${isNote(m) ? String(m.content) : ""}`;
};
function installImpactNotes(pi, current, deps) {
  let before = /* @__PURE__ */ new Map();
  let edited = /* @__PURE__ */ new Set();
  let noted = /* @__PURE__ */ new Set();
  let pending = /* @__PURE__ */ new Set();
  let queued = [];
  let anchored = [];
  let streaming = false;
  let evaluating = Promise.resolve();
  const enabled = (session) => session?.config()["proactive.impactNotes"] === true && isReady(session.store.get());
  const absolute = (cwd, raw) => {
    const path = resolve(cwd, raw.replace(/^@/, ""));
    return join(canonical(dirname(path)), basename(path));
  };
  const textBefore = async (session, path) => before.get(path) ?? await headText(session.root, path) ?? "";
  const newChanges = async (session, path) => {
    const { fileChanges, noteWorthy } = await import("./chunks/impact-NRXLU5IV.js");
    return fileChanges(path, await textBefore(session, path), readText(path) ?? "").filter(
      (change) => noteWorthy(change) && !noted.has(`${path}#${keyOf(change.before ?? change)}`)
    );
  };
  const deliver = (content) => {
    if (!streaming) return void queued.push(content);
    anchored.push({ content, anchor: void 0 });
    pi.sendMessage({ customType: IMPACT_NOTE_TYPE, content, display: true }, { deliverAs: "steer" });
  };
  const readyPaths = (session) => {
    const state = session.store.get();
    if (!enabled(session) || state.activity !== "idle" || state.rebuildNeeded || state.otherWriter) return [];
    const stale = new Set(state.changedPaths);
    return [...pending].filter((path) => !stale.has(path));
  };
  const evaluateNow = async (session) => {
    const ready = readyPaths(session);
    if (ready.length === 0) return;
    const stale = new Set(session.store.get().changedPaths);
    const { dependentsOf } = await import("./chunks/impact-NRXLU5IV.js");
    const lines = [];
    for (const [index, path] of ready.entries()) {
      pending.delete(path);
      try {
        for (const change of await newChanges(session, path)) {
          const q = { deps, session, signal: void 0 };
          const callers = (await dependentsOf(q, path, change, 1, /* @__PURE__ */ new Map(), true)).filter(
            (caller) => caller.path !== path && !stale.has(caller.path)
          );
          noted.add(`${path}#${keyOf(change.before ?? change)}`);
          const untouched = callers.filter((caller) => !edited.has(caller.path));
          if (untouched.length > 0) lines.push(impactLine(session.root, path, change, untouched));
        }
      } catch (error) {
        if (!(error instanceof ToolFailure && error.code === "CANCELLED")) continue;
        for (const later of ready.slice(index)) pending.add(later);
        break;
      }
    }
    if (lines.length > 0 && current() === session) deliver(impactNote(lines));
  };
  const evaluate = (session) => {
    evaluating = evaluating.then(() => evaluateNow(session)).catch(() => void 0);
    return evaluating;
  };
  const due = (session) => session && current() === session && readyPaths(session).length > 0 ? evaluate(session) : evaluating;
  pi.on("session_start", () => {
    before = /* @__PURE__ */ new Map();
    edited = /* @__PURE__ */ new Set();
    noted = /* @__PURE__ */ new Set();
    pending = /* @__PURE__ */ new Set();
    queued = [];
    anchored = [];
    const session = current();
    session?.store.subscribe((state, previous) => {
      if (current() !== session) return;
      for (const path of state.changedPaths) edited.add(path);
      const reconciled = previous.changedPaths.some((path) => pending.has(path) && !state.changedPaths.includes(path));
      const settled = state.activity === "idle" && previous.activity !== "idle";
      if ((reconciled || settled) && pending.size > 0 && state.activity === "idle") void evaluate(session);
    });
  });
  pi.on("tool_call", (event, ctx) => {
    const session = current();
    if (!enabled(session) || event.toolName !== "edit" && event.toolName !== "write") return;
    const raw = event.input.path;
    if (typeof raw !== "string") return;
    const path = absolute(ctx.cwd, raw);
    if (supportedSource(path) && isWithin(session.root, path) && !before.has(path))
      before.set(path, readText(path) ?? "");
  });
  pi.on("tool_result", async (event, ctx) => {
    const session = current();
    if (!enabled(session)) return;
    const touched = [];
    if (isEditToolResult(event) || isWriteToolResult(event)) {
      if (typeof event.input.path === "string") touched.push(absolute(ctx.cwd, event.input.path));
    } else if (event.toolName === "bash") touched.push(...session.store.get().changedPaths);
    else return;
    for (const path of touched) {
      if (!supportedSource(path) || !isWithin(session.root, path)) continue;
      edited.add(path);
      if ((await newChanges(session, path)).length > 0) pending.add(path);
    }
    if (pending.size === 0) return;
    await deps.settle();
    await evaluate(session);
  });
  pi.on("context", async (event) => {
    await due(current());
    if (anchored.length === 0) return;
    const contents = new Set(anchored.map((note) => note.content));
    const messages = event.messages.filter(
      (message) => !isNote(message) || !contents.has(String(message.content))
    );
    const tail = messages[messages.length - 1];
    if (tail?.role === "assistant")
      for (let at = event.messages.length - 1; at >= 0 && isNote(event.messages[at]); at--) {
        const landed = String(event.messages[at].content);
        for (const note of anchored) if (note.content === landed) note.anchor = identity(tail);
      }
    for (const note of anchored) {
      note.anchor ??= messages.length > 0 ? identity(messages[messages.length - 1]) : "";
      let at = note.anchor === "" ? 0 : messages.findIndex((message) => identity(message) === note.anchor) + 1;
      if (at === 0 && note.anchor !== "") continue;
      while (at < messages.length && isNote(messages[at])) at++;
      messages.splice(at, 0, {
        role: "custom",
        customType: IMPACT_NOTE_TYPE,
        content: note.content,
        display: true,
        timestamp: 0
      });
    }
    return { messages };
  });
  pi.on("agent_start", () => {
    streaming = true;
  });
  pi.on("agent_end", () => {
    streaming = false;
  });
  pi.on("before_agent_start", async () => {
    const session = current();
    await due(session);
    if (queued.length === 0 || !enabled(session)) return;
    const content = queued.join("\n");
    queued = [];
    return { message: { customType: IMPACT_NOTE_TYPE, content, display: true } };
  });
  return { edited: () => edited };
}

// src/agent/card.ts
var CARD_MAX_TOKENS = 200;
function estimateTextTokens(text) {
  return Math.ceil(text.length / 4);
}
var CARD_HEADING = "## Code graph (CodeGraphContext)";
function cardParts(tools) {
  const { graph } = tools;
  const routes = [
    [
      graph.relations,
      `callers, callees, call chains, ${tools.impact ? "" : "impact of a change, "}importers, class hierarchy, overrides`
    ],
    [tools.impact, "what will this change break (changed signatures of uncommitted edits, their callers)"],
    [graph.find, "where a function, class or symbol is defined"],
    [graph.deadCode, "dead code"],
    [graph.complexity, "most complex functions"],
    [graph.cypher, "other structural questions (read-only Cypher)"],
    [graph.stats, "graph size"]
  ];
  const present = routes.filter((route) => route[0] !== void 0);
  if (present.length === 0) return void 0;
  const text = ["grep", "read"].filter((name) => tools.text.includes(name));
  const exact = text.length > 0 ? text.join(" and ") : tools.text.includes("bash") ? "bash (rg, grep)" : void 0;
  const optional = ["Results carry path:line; read them before editing."];
  if (tools.doctor) optional.push(`If a graph tool fails: ${tools.doctor}.`);
  if (tools.skill) optional.push(`More detail: the ${tools.skill} skill.`);
  return {
    head: [CARD_HEADING, "This workspace has a code graph; ask it how code relates before opening files one by one:"],
    routes: present.map(([tool, question]) => `- ${question} \u2192 ${tool}`),
    exact: exact ? [`Exact text, strings, config and file contents: keep using ${exact}.`] : [],
    optional
  };
}
function cardLines(tools) {
  const parts = cardParts(tools);
  if (!parts) return [];
  const routes = [...parts.routes];
  const fits = (lines2) => estimateTextTokens(lines2.join("\n")) <= CARD_MAX_TOKENS;
  while (routes.length > 1 && !fits([...parts.head, ...routes, ...parts.exact])) routes.pop();
  const lines = [...parts.head, ...routes, ...parts.exact];
  if (!fits(lines)) return [];
  for (const line of parts.optional) if (fits([...lines, line])) lines.push(line);
  return lines;
}
function buildCard(tools) {
  return cardLines(tools).join("\n");
}

// src/agent/install.ts
var SKILL_NAME = "cgc-routing";
var CARD_SECTION = "code-graph";
var TEXT_TOOLS = ["grep", "read", "bash"];
function installAgentSurface(pi, current, freshness, edited = () => /* @__PURE__ */ new Set()) {
  let lease;
  let tools;
  let loading;
  const leaseFor = (session) => {
    if (!tools) throw new Error("pi-cgc's graph tools are not loaded");
    if (lease?.session !== session) {
      void lease?.lease.release("the session changed");
      lease = {
        session,
        lease: tools.createMcpLease({
          runner: session.runner,
          cwd: () => session.root,
          budgetMs: () => session.config()["timeouts.queryMs"]
        })
      };
    }
    return lease.lease;
  };
  const deps = {
    current,
    lease: leaseFor,
    settle: freshness.settle,
    possibleCallers: freshness.possibleCallers
  };
  const loadTools = () => {
    loading ??= Promise.all([
      import("./chunks/tools-EP3KS4OJ.js"),
      import("./chunks/gap-tools-VRW7XOAB.js"),
      import("./chunks/mcp-J52Z56KA.js"),
      import("./chunks/impact-NRXLU5IV.js")
    ]).then(
      ([graph, gaps, mcp, impact]) => {
        tools = {
          graph: graph.graphTools(deps),
          impact: impact.impactTool({ ...deps, edited }),
          gaps: gaps.gapTools(deps),
          createMcpLease: mcp.createMcpLease
        };
        return tools;
      },
      (error) => {
        loading = void 0;
        throw error;
      }
    );
    return loading;
  };
  const graphNames = Object.values(GRAPH_TOOL_NAMES);
  const gapNames = Object.values(GAP_TOOL_NAMES);
  const ownNames = /* @__PURE__ */ new Set([...graphNames, IMPACT_TOOL_NAME, ...gapNames]);
  const registered = /* @__PURE__ */ new Set();
  const switched = /* @__PURE__ */ new Map();
  const mcpTools = () => detectMcpTools(
    pi.getAllTools().map((tool) => tool.name).filter((name) => !ownNames.has(name))
  );
  const wantedTools = (state) => {
    const ready = isReady(state);
    const cgcAvailable = state.readiness !== "unavailable" && state.facts !== void 0;
    const mcp = mcpTools();
    const wanted = /* @__PURE__ */ new Map();
    for (const intent of INTENTS) wanted.set(GRAPH_TOOL_NAMES[intent], ready && !mcp.has(INTENT_CATALOG[intent]));
    wanted.set(IMPACT_TOOL_NAME, ready && !mcp.has(INTENT_CATALOG.relations));
    for (const name of gapNames) wanted.set(name, cgcAvailable);
    return wanted;
  };
  const syncTools = (state) => {
    const wanted = wantedTools(state);
    if (!tools && [...wanted.values()].some(Boolean)) {
      return loadTools().then(() => {
        const session = current();
        if (session) syncTools(session.store.get());
      });
    }
    for (const tool of tools ? [...Object.values(tools.graph), tools.impact, ...tools.gaps] : []) {
      if (wanted.get(tool.name) && !registered.has(tool.name)) {
        pi.registerTool(tool);
        registered.add(tool.name);
        switched.set(tool.name, true);
      }
    }
    const active = new Set(pi.getActiveTools());
    let changed = false;
    for (const name of registered) {
      const want = wanted.get(name) === true;
      if (switched.get(name) === want) continue;
      switched.set(name, want);
      if (want) active.add(name);
      else active.delete(name);
      changed = true;
    }
    if (changed) pi.setActiveTools([...active]);
    return void 0;
  };
  const syncInBackground = (state) => void syncTools(state)?.catch(() => void 0);
  const cardTools = (skills) => {
    const active = new Set(pi.getActiveTools());
    const mcp = mcpTools();
    const graphNames2 = {};
    for (const intent of INTENTS) {
      const name = mcp.get(INTENT_CATALOG[intent]) ?? GRAPH_TOOL_NAMES[intent];
      if (active.has(name)) graphNames2[intent] = name;
    }
    return {
      graph: graphNames2,
      impact: active.has(IMPACT_TOOL_NAME) ? IMPACT_TOOL_NAME : void 0,
      text: TEXT_TOOLS.filter((name) => active.has(name)),
      doctor: active.has(GAP_TOOL_NAMES.doctor) ? GAP_TOOL_NAMES.doctor : void 0,
      skill: skills?.some((skill) => skill.name === SKILL_NAME) ? SKILL_NAME : void 0
    };
  };
  pi.on("session_start", () => {
    const session = current();
    if (!session) return;
    syncInBackground(session.store.get());
    session.store.subscribe((state, previous) => {
      if (current() !== session) return;
      const needsDatabase = state.activity !== "updating" || holdsExclusiveLock(session.backend?.name);
      if (state.activity !== "idle" && previous.activity === "idle" && needsDatabase)
        void lease?.lease.release("maintenance started");
      if (state.readiness !== previous.readiness || state.facts !== previous.facts) syncInBackground(state);
    });
  });
  pi.on("input", async () => {
    const session = current();
    if (session) await syncTools(session.store.get());
  });
  pi.on("before_agent_start", (event) => {
    const session = current();
    const card = session && isReady(session.store.get()) ? buildCard(cardTools(event.systemPromptOptions.skills)) : "";
    const sections = event.systemPromptOptions.sections;
    if (sections) {
      if (card) sections[CARD_SECTION] = card;
      else delete sections[CARD_SECTION];
      return;
    }
    if (card) return { systemPrompt: `${event.systemPrompt}

${card}` };
  });
  pi.on("agent_end", () => void lease?.lease.release("the agent's run ended"));
  pi.on("session_shutdown", async () => {
    await lease?.lease.release("the session ended");
    lease = void 0;
  });
  return { deps };
}

// src/freshness/install.ts
import { basename as basename3, dirname as dirname2, join as join3, resolve as resolve3 } from "node:path";
import {
  isEditToolResult as isEditToolResult2,
  isWriteToolResult as isWriteToolResult2
} from "@mariozechner/pi-coding-agent";

// src/cgc/other-watchers.ts
import { readdirSync, readFileSync as readFileSync3, readlinkSync } from "node:fs";
import { basename as basename2, resolve as resolve2 } from "node:path";

// src/cgc/children.ts
import { spawn } from "node:child_process";
import { readFileSync as readFileSync2 } from "node:fs";
var KEY = /* @__PURE__ */ Symbol.for("pi-cgc.children");
var TEARDOWN_SIGNALS = ["SIGINT", "SIGTERM", "SIGHUP"];
function registry() {
  const holder = globalThis;
  holder[KEY] ??= { groups: /* @__PURE__ */ new Map(), daemons: /* @__PURE__ */ new Map(), stopping: /* @__PURE__ */ new Set(), hooksInstalled: false, spawnsTotal: 0 };
  holder[KEY].daemons ??= /* @__PURE__ */ new Map();
  holder[KEY].stopping ??= /* @__PURE__ */ new Set();
  return holder[KEY];
}
function registerChild(child, graceMs) {
  const reg = registry();
  reg.spawnsTotal++;
  if (child.pid === void 0) return;
  reg.groups.set(child.pid, graceMs);
  installHooks(reg);
  tellGuardian(reg, `+${child.pid} ${Math.ceil(graceMs / 1e3)}`);
}
function unregisterChild(child) {
  if (child.pid === void 0) return;
  const reg = registry();
  if (reg.groups.delete(child.pid) && reg.guardian) tellGuardian(reg, `-${child.pid}`);
  const daemon = reg.daemons.get(child.pid);
  if (daemon === void 0) return;
  reg.daemons.delete(child.pid);
  const stop = stopDaemon(reg, daemon);
  reg.stopping.add(stop);
  void stop.finally(() => reg.stopping.delete(stop));
}
function registerDaemon(child, daemon) {
  if (child.pid === void 0) return;
  const reg = registry();
  if (!reg.groups.has(child.pid)) return;
  reg.daemons.set(child.pid, daemon);
  tellGuardian(reg, `=${daemon}`);
}
function daemonStops() {
  return Promise.all([...registry().stopping]).then(() => void 0);
}
function isRedisServer(pid) {
  try {
    const stat = readFileSync2(`/proc/${pid}/stat`, "utf8");
    const state = stat.slice(stat.lastIndexOf(")") + 2)[0];
    if (state === "Z" || state === "X") return false;
    return readFileSync2(`/proc/${pid}/cmdline`, "utf8").includes("redis-server");
  } catch {
    return false;
  }
}
async function stopDaemon(reg, daemon) {
  if (isRedisServer(daemon)) {
    signalProcess(daemon, "SIGTERM");
    const deadline = Date.now() + 15e3;
    while (isRedisServer(daemon) && Date.now() < deadline) {
      await new Promise((resolve6) => setTimeout(resolve6, 50).unref());
    }
    if (isRedisServer(daemon)) signalProcess(daemon, "SIGKILL");
  }
  if (reg.guardian) tellGuardian(reg, `~${daemon}`);
}
function signalProcess(pid, signal) {
  try {
    process.kill(pid, signal);
  } catch {
  }
}
function liveGroups() {
  return [...registry().groups.keys()];
}
function installHooks(reg) {
  if (reg.hooksInstalled) return;
  reg.hooksInstalled = true;
  process.on("exit", () => reapAll(reg));
  for (const signal of TEARDOWN_SIGNALS) {
    const onSignal = () => {
      reapAll(reg);
      if (process.listenerCount(signal) === 1) {
        process.removeListener(signal, onSignal);
        process.kill(process.pid, signal);
      }
    };
    process.on(signal, onSignal);
  }
}
function reapAll(reg) {
  if (reg.groups.size === 0 && reg.daemons.size === 0 && reg.stopping.size === 0) return;
  const pids = [...reg.groups.keys()];
  if (reg.guardian && tellGuardian(reg, "!")) {
    reg.groups.clear();
    reg.daemons.clear();
    return;
  }
  for (const daemon of reg.daemons.values()) if (isRedisServer(daemon)) signalProcess(daemon, "SIGTERM");
  reg.daemons.clear();
  if (pids.length === 0) return;
  const grace = Math.max(...reg.groups.values());
  reg.groups.clear();
  for (const pid of pids) signalGroup(pid, "SIGINT");
  const reaper = spawn(process.execPath, ["-e", REAPER_SOURCE, String(grace), ...pids.map(String)], {
    detached: true,
    stdio: "ignore"
  });
  reaper.unref();
}
function signalGroup(pid, signal) {
  if (pid === void 0) return;
  try {
    process.kill(-pid, signal);
  } catch {
  }
}
var REAPER_SOURCE = `
const [grace, ...pids] = process.argv.slice(1).map(Number);
const send = (s) => pids.forEach((p) => { try { process.kill(-p, s); } catch {} });
const alive = () => pids.some((p) => { try { process.kill(-p, 0); return true; } catch { return false; } });
setTimeout(() => { if (!alive()) return; send("SIGTERM"); setTimeout(() => send("SIGKILL"), grace); }, grace);
`;
var GUARDIAN_SCRIPT = `
g=' '; d=' '; s=1
redis() { case $(tr '\\0' ' ' < /proc/$1/cmdline 2>/dev/null) in *redis-server*) return 0 ;; esac; return 1; }
daemons() { for p in $1; do redis $p && kill -$2 $p 2>/dev/null; done; }
stop() {
  [ "$1" = ' ' ] && [ "$3" = ' ' ] && return
  for p in $1; do kill -INT -$p 2>/dev/null; done
  sleep $2
  for p in $1; do kill -TERM -$p 2>/dev/null; done
  daemons "$3" TERM
  sleep $2
  for p in $1; do kill -KILL -$p 2>/dev/null; done
  i=0; while [ $i -lt 15 ]; do
    left=''; for p in $3; do redis $p && left=1; done
    [ -z "$left" ] && return
    sleep 1; i=$((i+1))
  done
  daemons "$3" KILL
}
while IFS= read -r l; do
  case $l in
    +*) set -- \${l#+}; g="$g$1 "; [ "$2" -gt "$s" ] && s=$2 ;;
    -*) p=\${l#-}; case $g in *" $p "*) g="\${g%%" $p "*} \${g#*" $p "}" ;; esac ;;
    =*) d="$d\${l#=} " ;;
    ~*) p=\${l#~}; case $d in *" $p "*) d="\${d%%" $p "*} \${d#*" $p "}" ;; esac ;;
    !) stop "$g" "$s" "$d" & g=' '; d=' ' ;;
  esac
done
stop "$g" "$s" "$d"
`;
function tellGuardian(reg, line) {
  if (reg.guardian === void 0) reg.guardian = startGuardian(reg);
  const stdin = reg.guardian?.stdin;
  if (!stdin || stdin.destroyed) return false;
  stdin.write(`${line}
`);
  return true;
}
function startGuardian(reg) {
  let guardian;
  try {
    guardian = spawn("/bin/sh", ["-c", GUARDIAN_SCRIPT, "pi-child-guardian"], {
      detached: true,
      stdio: ["pipe", "ignore", "ignore"]
    });
  } catch {
    return null;
  }
  const lost = () => {
    if (reg.guardian !== guardian) return;
    reg.guardian = void 0;
  };
  guardian.once("error", () => {
    lost();
    reg.guardian = null;
  });
  guardian.once("exit", lost);
  guardian.stdin?.on("error", lost);
  guardian.unref();
  guardian.stdin?.unref?.();
  for (const [pid, grace] of reg.groups) guardian.stdin?.write(`+${pid} ${Math.ceil(grace / 1e3)}
`);
  for (const daemon of reg.daemons.values()) guardian.stdin?.write(`=${daemon}
`);
  return guardian;
}

// src/cgc/other-watchers.ts
var WATCH_COMMANDS = /* @__PURE__ */ new Set(["watch", "w"]);
var OPTIONS_WITH_VALUE = /* @__PURE__ */ new Set(["--context", "-c"]);
var CGC_PROGRAMS = /* @__PURE__ */ new Set(["cgc", "codegraphcontext"]);
function watchedDirOf(argv, cwd) {
  let at = argv.findIndex(
    (arg, i) => CGC_PROGRAMS.has(basename2(arg)) || arg === "-m" && argv[i + 1] === "codegraphcontext"
  );
  if (at < 0) return void 0;
  if (argv[at] === "-m") at += 1;
  const command = argv[at + 1];
  if (command === void 0 || !WATCH_COMMANDS.has(command)) return void 0;
  for (let i = at + 2; i < argv.length; i++) {
    const arg = argv[i];
    if (OPTIONS_WITH_VALUE.has(arg)) i += 1;
    else if (!arg.startsWith("-")) return resolve2(cwd, arg);
  }
  return resolve2(cwd, ".");
}
function watchesRoot(dir, root) {
  return isWithin(dir, root) || isWithin(root, dir);
}
function groupOf(pid) {
  try {
    const stat = readFileSync3(`/proc/${pid}/stat`, "utf8");
    return Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[2]);
  } catch {
    return void 0;
  }
}
function otherWatchersOf(root) {
  let entries;
  try {
    entries = readdirSync("/proc");
  } catch {
    return [];
  }
  const found = [];
  const own = new Set(liveGroups());
  for (const entry of entries) {
    const pid = Number(entry);
    if (!Number.isInteger(pid) || pid <= 0 || pid === process.pid) continue;
    try {
      const argv = readFileSync3(`/proc/${pid}/cmdline`, "utf8").split("\0").filter(Boolean);
      if (!argv.some((arg) => WATCH_COMMANDS.has(arg))) continue;
      const dir = watchedDirOf(argv, readlinkSync(`/proc/${pid}/cwd`));
      if (dir === void 0) continue;
      const watched = canonical(dir);
      if (watchesRoot(watched, root) && !own.has(groupOf(pid) ?? -1)) found.push({ pid, dir: watched });
    } catch {
    }
  }
  return found;
}
function describeOtherWatchers(watchers) {
  const which = watchers.map(({ pid, dir }) => `pid ${pid} on ${dir}`).join(", ");
  return `a cgc watch outside pi-cgc (${which}) writes this graph, and cgc's watcher leaves it different from a full index; pi-cgc calls it fresh again once that watcher has stopped and the graph is brought up to date`;
}

// src/freshness/other-writers.ts
var OTHER_WATCHERS_EVERY_MS = 3e3;
function createOtherWriters(deps) {
  let timer;
  const look = (session) => {
    const found = otherWatchersOf(session.root);
    const before = session.store.get().otherWriter;
    session.store.apply(
      (state) => otherWritersSeen(state, found.length > 0 ? describeOtherWatchers(found) : void 0)
    );
    if (!before || found.length > 0) return;
    deps.updates()?.writtenElsewhere("a cgc watch outside pi-cgc wrote the graph");
    if (session.store.get().freshness !== "possibly-stale") return;
    deps.catchUp(session);
  };
  const stop = () => clearInterval(timer);
  return {
    look,
    poll(session, current) {
      stop();
      timer = setInterval(() => {
        if (current() === session && !session.disposed && isReady(session.store.get())) look(session);
      }, OTHER_WATCHERS_EVERY_MS);
      timer.unref();
    },
    stop
  };
}

// src/freshness/quiet-sync.ts
var QUIET_MS = 1500;
function createQuietSync(deps) {
  let quietTimer;
  let syncing;
  const cancel = () => {
    if (quietTimer) clearTimeout(quietTimer);
    quietTimer = void 0;
  };
  const sync = async (session, automatic) => {
    const joined = syncing !== void 0;
    const answer = await shared(session, automatic);
    const skipped = session.store.get().lastAction?.outcome === "BUSY";
    return joined && !automatic && skipped && !session.disposed ? shared(session, false) : answer;
  };
  const shared = (session, automatic) => {
    syncing ??= (async () => {
      const updated = await deps.updates()?.run(!automatic);
      if (updated !== void 0) return updated;
      const { readiness, reason, otherWriter } = session.store.get();
      if (readiness === "unindexed") return `Nothing to sync: cgc is unindexed (${reason}).`;
      if (otherWriter) return `Not synced: ${otherWriter}.`;
      if (automatic) session.store.apply(autoSyncCounted);
      const { syncAndVerify } = await import("./chunks/sync-VPHDGZWV.js");
      const outcome = await syncAndVerify(session);
      if (outcome.result.code !== "OK") return `Sync ended ${outcome.result.code}: ${outcome.result.reason}`;
      if (outcome.unverified) {
        if (!automatic) return `Synced ${session.root}, but ${outcome.unverified}; the graph stays possibly stale.`;
        session.notices.once(
          "sync-failed",
          `The graph could not be verified after a sync: ${outcome.unverified}.`,
          "warning"
        );
        return outcome.unverified;
      }
      return `Synced ${session.root}: the graph reflects ${count(outcome.verified.length, "changed file")}.`;
    })().finally(() => {
      syncing = void 0;
    });
    return syncing;
  };
  const maybeAuto = (session) => {
    const state = session.store.get();
    const config = session.config();
    if (session.disposed || !config["freshness.autoSync"] || deps.watcherActive() || state.otherWriter) return;
    if (state.readiness !== "ready" || state.freshness !== "possibly-stale" || state.activity !== "idle") return;
    if (deps.updates()?.ready) return void sync(session, true);
    if (state.autoSyncs >= config["freshness.maxSyncsPerSession"]) {
      session.notices.once(
        "sync-budget-spent",
        `pi-cgc made its ${config["freshness.maxSyncsPerSession"]} automatic syncs for this session; the graph stays possibly stale until /cgc sync.`
      );
      return;
    }
    const stopped = session.stoppedByBudget();
    if (stopped) {
      session.notices.once(
        "budget-exceeded",
        `pi-cgc is not syncing ${session.root} automatically: its last ${stopped.what} was stopped after ${formatElapsed(stopped.ranForMs)} by its time budget (timeouts.maintenanceMs). The graph stays possibly stale; raise timeouts.maintenanceMs and run /cgc sync, or keep it fresh with a watcher (freshness.watch) on a server backend.`,
        "warning"
      );
      return;
    }
    void sync(session, true);
  };
  return {
    arm(session) {
      cancel();
      quietTimer = setTimeout(() => maybeAuto(session), QUIET_MS);
      quietTimer.unref();
    },
    cancel,
    maybeAuto,
    sync,
    get syncing() {
      return syncing !== void 0;
    }
  };
}

// src/freshness/engine.ts
import { createHash } from "node:crypto";
import { existsSync, mkdirSync } from "node:fs";
import { join as join2 } from "node:path";
function engineModelKept(cacheDir, root) {
  const cache = join2(cacheDir, `${createHash("sha1").update(root).digest("hex")}.pickle`);
  return existsSync(cache) && !existsSync(cache.replace(/\.pickle$/, ".untrusted")) && !existsSync(join2(cacheDir, ENGINE_WRITTEN_ELSEWHERE));
}
function startEngine(options) {
  mkdirSync(options.cacheDir, { recursive: true });
  let phase = { phase: "starting" };
  let nextId = 0;
  const waiting = /* @__PURE__ */ new Map();
  let markStarted = () => {
  };
  const started = new Promise((resolve_) => {
    markStarted = resolve_;
  });
  const settleStart = (next) => {
    phase = next;
    markStarted(next);
  };
  const onStdout = (line) => {
    let message;
    try {
      message = JSON.parse(line);
    } catch {
      return;
    }
    if (message.event === "ready" && phase.phase === "starting") {
      if (message.backend !== "falkordb") handle.leaveLiteTurn();
      settleStart({ phase: "ready", facts: message });
    } else if (message.event === "refused" && phase.phase === "starting") {
      settleStart({ phase: "refused", reason: String(message.reason ?? "refused") });
    } else if (typeof message.id === "number") {
      waiting.get(message.id)?.(message);
      waiting.delete(message.id);
    }
  };
  const handle = options.runner.startLongLived(
    [
      ...options.program ?? [ENGINE_SCRIPT],
      ...parseStoreArgs(options.parseStore),
      "serve",
      "--root",
      options.root,
      "--cache-dir",
      options.cacheDir,
      ...options.holdMs === void 0 ? [] : ["--hold-ms", String(options.holdMs)],
      ...options.context === void 0 ? [] : ["--context", options.context]
    ],
    {
      cwd: options.root,
      env: options.env,
      stdin: true,
      program: { path: options.python, name: "pi-cgc engine" },
      onLine: (line, stream) => {
        if (stream === "stdout") onStdout(line);
      }
    }
  );
  const startTimer = setTimeout(() => {
    if (phase.phase !== "starting") return;
    settleStart({ phase: "failed", reason: `the engine did not start within ${options.startBudgetMs} ms` });
    void handle.stop();
  }, options.startBudgetMs);
  startTimer.unref();
  void handle.exited.then((result) => {
    clearTimeout(startTimer);
    const reason = result.code === "CANCELLED" ? "stopped" : `the engine exited (${result.code}): ${result.reason}`;
    if (phase.phase === "starting" || phase.phase === "ready") {
      const refused = result.exitCode === 3;
      settleStart({ phase: refused ? "refused" : result.code === "CANCELLED" ? "stopped" : "failed", reason });
    }
    for (const waiter of waiting.values()) waiter({ ok: false, code: "FAILED", reason });
    waiting.clear();
  });
  function request(op, body, budgetMs, readOnly = false) {
    if (phase.phase !== "ready") {
      const reason = phase.phase === "starting" ? "the engine has not started yet" : phase.reason;
      return Promise.resolve({ ok: false, code: "UNAVAILABLE", reason });
    }
    const id = ++nextId;
    return new Promise((resolve_) => {
      const timer = setTimeout(() => {
        waiting.delete(id);
        const reason = `the engine's ${op} took longer than ${budgetMs} ms`;
        if (readOnly) return resolve_({ ok: false, code: "TIMEOUT", reason });
        phase = { phase: "failed", reason };
        void handle.stop();
        resolve_({ ok: false, code: "TIMEOUT", reason });
      }, budgetMs);
      waiting.set(id, (answer) => {
        clearTimeout(timer);
        if (answer.ok === true) resolve_({ ok: true, value: answer });
        else
          resolve_({
            ok: false,
            code: answer.code ?? "FAILED",
            reason: String(answer.reason ?? "the engine failed")
          });
      });
      handle.child?.stdin?.write(`${JSON.stringify({ id, op, ...body })}
`);
    });
  }
  return {
    get phase() {
      return phase;
    },
    get pid() {
      return handle.pid;
    },
    started,
    update: (paths, budgetMs) => request("update", { paths }, budgetMs),
    verify: (paths, budgetMs) => request("verify", { paths }, budgetMs),
    rebuilt: (unknown, budgetMs) => request("rebuilt", { unknown }, budgetMs),
    adopt: (budgetMs) => request("adopt", {}, budgetMs),
    possible: (targets, budgetMs) => request("possible", { targets }, budgetMs, true),
    async stop() {
      clearTimeout(startTimer);
      await handle.stop();
    }
  };
}

// src/freshness/updates.ts
var NOTHING_TO_UPDATE = "Nothing to update: no file changed since the graph was verified.";
var pause = (ms) => new Promise((resolve6) => setTimeout(resolve6, ms));
var DEBOUNCE_MS = 300;
var SETTLE_BOUND_MS = 5e3;
var SETTLE_START_MS = 3e4;
var POSSIBLE_BUDGET_MS = 2e4;
var START_BUDGET_MS = 6e5;
var EMBEDDED_HOLD_MS = 300;
var BUSY_RETRIES = 1;
var BUSY_SKIP = "Update skipped: ";
function adoptionNote(adopted, ms) {
  const wrote = adopted.files + adopted.links + adopted.stale;
  return `graph adopted in ${ms} ms (${wrote === 0 ? "nothing differed from a full index" : `${count(wrote, "file")} written again`})`;
}
function createEngineUpdates(session, fellBack) {
  let engine;
  let why = "waiting for the first probe";
  let last = "";
  let timer;
  let running;
  let again = false;
  let rebuiltBeforeReady = false;
  let rebuiltDone = Promise.resolve();
  let rebuildStartedAt;
  let stopping;
  let notStarted = "not started yet: it starts at the first change, applies it and stays";
  let adoptDone = Promise.resolve();
  let adoptPending = false;
  let adoptedNote = "";
  let adoptionConsidered = false;
  const ready = () => engine?.phase.phase === "ready";
  session.store.subscribe((state, previous) => {
    if (state.readiness !== "ready" || previous.readiness === "ready") return;
    if (rebuiltBeforeReady && !engine) consider();
    const watched = session.config()["freshness.watch"] !== "off" || state.otherWriter;
    if (!adoptionConsidered && !engine && session.config()["freshness.autoSync"] && !watched) {
      adoptionConsidered = true;
      if (!engineModelKept(session.ledger.engineCacheDir, session.root)) consider();
    }
  });
  const refusal = () => {
    const state = session.store.get();
    const version = state.facts?.cgcVersion;
    if (!session.config()["freshness.engine"]) return { reason: "off (freshness.engine is false)", tell: false };
    if (state.readiness !== "ready" || !version) return "wait";
    if (!PROVEN_CGC_VERSIONS.includes(version))
      return {
        reason: `not used: it was proven on cgc ${PROVEN_CGC_VERSIONS.join(", ")}, this is cgc ${version}`,
        tell: true
      };
    if (!engineScriptPresent()) return { reason: "not used: its script is missing from the package", tell: true };
    return void 0;
  };
  const consider = () => {
    if (engine || session.disposed) return;
    if (stopping) return void stopping.then(consider);
    const refused = refusal();
    if (refused === "wait") return;
    const interpreter = refused ? void 0 : cgcInterpreter(session.runner.executable, session.env);
    if (refused || !interpreter?.ok) {
      why = refused?.reason ?? `not used: ${interpreter && !interpreter.ok ? interpreter.reason : "no interpreter"}`;
      if (refused?.tell !== false) fallBack(why);
      return;
    }
    why = "starting";
    adoptedNote = "";
    engine = startEngine({
      runner: session.runner,
      python: interpreter.python,
      root: session.root,
      cacheDir: session.ledger.engineCacheDir,
      parseStore: { dir: session.ledger.parseStoreDir, mb: session.config()["engine.parseStoreMb"] },
      startBudgetMs: START_BUDGET_MS,
      holdMs: holdsExclusiveLock(session.backend?.name) ? EMBEDDED_HOLD_MS : void 0,
      // A linked worktree's graph is its own named context (worktree.mode isolate), named as cgc's MCP server
      // gets it (by its database and path), so that both meet at the same FalkorDB Lite daemon where that is it.
      context: session.worktree.subcommandArgs()[1],
      env: session.worktree.serverEnv()
    });
    void engine.started.then((phase) => {
      if (phase.phase === "ready") {
        why = "";
        const since = session.store.get().rebuildNeeded || session.ledger.abandonedRunNote();
        if (rebuiltBeforeReady && !phase.facts.trusted && !since) tellRebuilt();
        else if (!phase.facts.trusted && !since) adopt();
        if (session.store.get().changedPaths.length > 0) schedule();
      } else if (!session.disposed) {
        why = `not used: ${"reason" in phase ? phase.reason : "it did not start"}`;
        fallBack(why);
      }
    });
  };
  const fallBack = (reason) => {
    session.notices.once(
      "engine-fallback",
      `pi-cgc's incremental engine is ${reason}; each sync is a full rebuild (cgc index --force) instead.`,
      "warning"
    );
  };
  const retire = (reason) => {
    why = `stopped after a failure: ${reason}`;
    void engine?.stop();
    fallBack(why);
    fellBack();
  };
  const tellRebuilt = () => {
    rebuiltBeforeReady = false;
    const current = engine;
    if (!current) return;
    const since = rebuildStartedAt;
    const unknown = session.store.get().changedPaths.filter((path) => {
      const touched = lastTouched(path);
      return since === void 0 || touched === void 0 || touched >= since - CLOCK_SLACK_MS;
    });
    rebuiltDone = current.rebuilt(unknown, session.config()["timeouts.maintenanceMs"]).then((answer) => {
      if (!answer.ok && !session.disposed) retire(answer.reason);
    });
  };
  const adopt = () => {
    const current = engine;
    if (!current || session.store.get().otherWriter) return;
    const settleNote = session.ledger.runStarted("adopt");
    const once = () => current.adopt(session.config()["timeouts.maintenanceMs"]);
    const asked = holdsExclusiveLock(session.backend?.name) ? session.runner.exclusive(once) : once();
    adoptPending = true;
    adoptDone = asked.then((answer) => {
      adoptPending = false;
      const wroteNothing = !answer.ok && ["UNSUPPORTED", "NO_GRAPH", "REBUILD"].includes(answer.code);
      settleNote(answer.ok ? "OK" : wroteNothing ? "SKIPPED" : answer.code === "BUSY" ? "BUSY" : "FAILED");
      if (session.disposed || engine !== current) return;
      if (!answer.ok) {
        if (answer.code === "REBUILD") fellBack();
        return;
      }
      const { stampBefore, stampAfter, adopted, ms } = answer.value;
      const outside = session.provenance.ownWrite(stampBefore, stampAfter, settleNote.windowId);
      if (outside) {
        session.store.apply((state) => graphWrittenOutside(state, outside));
        session.ledger.writtenElsewhere();
        fellBack();
        return;
      }
      if (adopted) adoptedNote = adoptionNote(adopted, ms);
    });
  };
  const schedule = () => {
    if (!ready() || !session.config()["freshness.autoSync"]) return;
    if (timer) clearTimeout(timer);
    timer = setTimeout(() => {
      timer = void 0;
      void run();
    }, DEBOUNCE_MS);
    timer.unref();
  };
  const applyOnce = async (current) => {
    await rebuiltDone;
    if (adoptPending) {
      session.store.apply((state, now) => maintenanceStarted(state, "updating", "update", now));
      await adoptDone;
      session.store.apply((state, now) => maintenanceSettled(state, "OK", now));
    }
    const { readiness, reason } = session.store.get();
    if (readiness === "unindexed") return `Nothing to update: cgc is unindexed (${reason}).`;
    if (session.ledger.abandonedRunNote()) return void 0;
    const { changedPaths: paths, freshness, rebuildNeeded } = session.store.get();
    if (rebuildNeeded) return void 0;
    if (paths.length === 0) return freshness === "possibly-stale" ? void 0 : NOTHING_TO_UPDATE;
    const budget = session.config()["timeouts.maintenanceMs"];
    session.store.apply((state, now) => maintenanceStarted(state, "updating", "update", now));
    const settleNote = session.ledger.runStarted("update");
    const { updated, checked } = await talk(current, paths, budget);
    if (session.disposed) {
      settleNote("FAILED");
      return "the session ended";
    }
    settleNote(updated.ok || updated.code === "REBUILD" ? "OK" : updated.code === "BUSY" ? "BUSY" : "FAILED");
    if (engine !== current) {
      session.store.apply((state, now) => maintenanceSettled(state, updated.ok ? "OK" : updated.code, now));
      return `Update set aside: the engine was ${notStarted}.`;
    }
    if (!updated.ok && updated.code === "BUSY") {
      session.store.apply((state, now) => maintenanceSettled(state, "BUSY", now, `update: ${updated.reason}`));
      session.notices.once(
        "skipped-busy",
        "cgc update skipped: another cgc process holds the database lock.",
        "warning"
      );
      await session.refresh();
      return `${BUSY_SKIP}${updated.reason}`;
    }
    if (!updated.ok && updated.code === "NO_GRAPH") {
      session.store.apply((state, now) => maintenanceSettled(state, "FAILED", now, `update: ${updated.reason}`));
      await session.refresh();
      return `Update not applied: ${updated.reason}.`;
    }
    if (!updated.ok && updated.code === "REBUILD") {
      session.store.apply((state, now) => maintenanceSettled(state, "OK", now));
      fellBack();
      return void 0;
    }
    if (!checked.ok) {
      session.store.apply((state, now) => maintenanceSettled(state, "FAILED", now, `update: ${checked.reason}`));
      retire(checked.reason);
      return void 0;
    }
    session.store.apply((state, now) => maintenanceSettled(state, "OK", now));
    const outside = updated.ok ? session.provenance.ownWrite(updated.value.stampBefore, updated.value.stampAfter, settleNote.windowId) : void 0;
    if (outside) {
      session.store.apply((state) => graphWrittenOutside(state, outside));
      session.ledger.writtenElsewhere();
      fellBack();
      return void 0;
    }
    const reflected = updated.ok ? checked.value.reflected : [];
    session.store.apply((state, now) => freshnessVerified(state, reflected, now));
    if (updated.ok) {
      const { ms, lockMs, rewritten, adopted, bulk } = updated.value;
      if (adopted) adoptedNote = adoptionNote(adopted, ms);
      last = `last update: ${count(paths.length, "file")} in ${ms} ms (database held ${lockMs} ms; links of ${count(rewritten ?? 0, "other file")} rewritten${bulk ? "; written in bulk" : ""})`;
    }
    const { otherWriter } = session.store.get();
    if (otherWriter) return `Updated ${session.root}, but ${otherWriter}.`;
    const missing = paths.length - reflected.length;
    return missing > 0 ? `Updated ${session.root}, but ${count(missing, "changed file")} ${missing === 1 ? "is" : "are"} not reflected yet; the graph stays possibly stale.` : `Updated ${session.root}: the graph reflects ${count(reflected.length, "changed file")}.`;
  };
  const talk = async (current, paths, budget) => {
    const exclusive = holdsExclusiveLock(session.backend?.name);
    const once = async () => {
      const updated = await current.update(paths, budget);
      const checked = updated.ok ? await current.verify(paths, session.config()["timeouts.queryMs"]) : updated;
      if (exclusive) await pause(EMBEDDED_HOLD_MS + 200);
      return { updated, checked };
    };
    for (let attempt = 0; ; attempt++) {
      const answer = exclusive ? await session.runner.exclusive(once) : await once();
      if (answer.updated.ok || answer.updated.code !== "BUSY" || attempt >= BUSY_RETRIES || session.disposed)
        return answer;
      await pause(1e3 * (attempt + 1));
    }
  };
  const run = async (asked = false) => {
    if (stopping) {
      await stopping;
      consider();
    }
    if (engine?.phase.phase === "starting") await engine.started;
    if (!engine || !ready()) return void 0;
    if (running) {
      again = true;
      const joined = await running;
      return asked && joined?.startsWith(BUSY_SKIP) && !session.disposed ? run() : joined;
    }
    const current = engine;
    running = (async () => {
      let message;
      let said;
      let busy = false;
      do {
        again = false;
        message = await applyOnce(current);
        busy = message?.startsWith(BUSY_SKIP) ?? false;
        if (message !== NOTHING_TO_UPDATE || said === void 0) said = message;
      } while (again && !busy && message !== void 0 && ready() && !session.disposed);
      return message === void 0 ? void 0 : said;
    })().finally(() => {
      running = void 0;
    });
    return running;
  };
  const describe = () => {
    if (engine?.phase.phase === "ready") {
      const { cgcVersion, backend, files, startMs, warm } = engine.phase.facts;
      const started = `started in ${(startMs / 1e3).toFixed(1)} s${warm ? " (warm)" : ""}`;
      const notes = [adoptedNote, last].filter((note) => note !== "");
      return `ready \u2014 cgc ${cgcVersion}, ${backend}, ${files} files, ${started}${notes.map((note) => `; ${note}`).join("")}`;
    }
    if (engine) return why;
    const refused = refusal();
    if (refused === "wait") return why;
    return refused ? refused.reason : notStarted;
  };
  return {
    get ready() {
      return ready() || engine?.phase.phase === "starting";
    },
    describe,
    schedule() {
      consider();
      schedule();
    },
    run: (asked) => {
      consider();
      return run(asked);
    },
    rebuilt(startedAt) {
      rebuildStartedAt = startedAt;
      if (ready()) return tellRebuilt();
      rebuiltBeforeReady = true;
      consider();
    },
    writtenElsewhere(by) {
      session.ledger.writtenElsewhere();
      const current = engine;
      if (!current) return;
      engine = void 0;
      notStarted = `stopped: ${by}; the engine starts again at the next change it sees, and then compares the graph with a full index of the tree before it writes`;
      stopping = (async () => {
        await running?.catch(() => void 0);
        session.ledger.writtenElsewhere();
        await current.stop();
      })().finally(() => {
        stopping = void 0;
      });
    },
    async settle(signal) {
      const bound = boundBy(signal);
      if (engine?.phase.phase === "starting") await Promise.race([engine.started, bound(SETTLE_START_MS)]);
      if (engine?.phase.phase === "starting") return [...session.store.get().changedPaths];
      if (!ready()) return [];
      if (timer) {
        clearTimeout(timer);
        timer = void 0;
        void run();
      }
      if (running) await Promise.race([running, bound(SETTLE_BOUND_MS)]);
      return running ? [...session.store.get().changedPaths] : [];
    },
    async possible(targets, signal) {
      if (stopping) await stopping;
      consider();
      if (engine?.phase.phase === "starting") await Promise.race([engine.started, boundBy(signal)(SETTLE_START_MS)]);
      if (signal?.aborted) return { unknown: "the question was cancelled" };
      const current = engine;
      if (current?.phase.phase === "starting")
        return { unknown: "pi-cgc's engine is still starting (it reads the tree); ask again shortly" };
      if (current?.phase.phase !== "ready") return { unknown: `pi-cgc's engine is ${describe()}` };
      const answer = await current.possible(targets, POSSIBLE_BUDGET_MS);
      if (!answer.ok) return { unknown: `pi-cgc's engine did not answer (${answer.code}: ${answer.reason})` };
      return { sites: answer.value.sites };
    },
    async stop() {
      if (timer) clearTimeout(timer);
      await engine?.stop();
    }
  };
}
var boundBy = (signal) => (ms) => new Promise((resolve6) => {
  setTimeout(resolve6, ms).unref();
  signal?.addEventListener("abort", () => resolve6(), { once: true });
});

// src/freshness/watch-start.ts
function startWatcherLater(session, deps) {
  if (session.config()["freshness.watch"] === "off") return;
  void import("./chunks/watcher-WLTAQZGU.js").then(
    ({ startWatcherIfEnabled }) => {
      if (!deps.isCurrent() || session.disposed) return;
      const watcher = startWatcherIfEnabled(session, {
        worktreeGate: () => session.worktree.allowsWatcher(),
        graphWritten: () => deps.updates.writtenElsewhere("pi-cgc's cgc watch writes the graph now")
      });
      deps.started(watcher);
      void watcher.finished.then((record) => {
        if (record.phase !== "died" || !deps.isCurrent() || session.disposed) return;
        deps.died();
      });
    },
    // No watcher and no claim; syncs keep the graph.
    (error) => session.notices.once(
      "watcher-not-verified",
      `No watcher this session: pi-cgc's watcher could not be loaded (${String(error)}); syncs keep the graph.`,
      "warning"
    )
  );
}

// src/freshness/install.ts
function installFreshness(pi, current) {
  let watcher;
  let updates;
  let agentRunning = false;
  const quiet = createQuietSync({ updates: () => updates, watcherActive: () => watcher?.active ?? false });
  const catchUp = (session) => {
    updates?.schedule();
    if (!agentRunning) quiet.arm(session);
  };
  const otherWriters = createOtherWriters({ updates: () => updates, catchUp });
  const changed = (session, paths) => {
    if (paths.length === 0) return;
    session.store.apply((state) => changesObserved(state, paths));
    updates?.schedule();
  };
  const observe = (session, paths) => {
    if (watcher?.active) return;
    otherWriters.look(session);
    const inside = paths.filter((path) => isWithin(session.root, path) && isTrackedPath(session.root, path));
    session.tracker.observed(inside);
    changed(session, inside);
  };
  const checkFiles = (session) => {
    if (watcher?.active) return;
    otherWriters.look(session);
    changed(session, session.tracker.check());
  };
  pi.on("session_start", () => {
    const session = current();
    watcher = void 0;
    updates = void 0;
    otherWriters.stop();
    if (!session) return;
    otherWriters.poll(session, current);
    const sessionUpdates = createEngineUpdates(session, () => {
      if (!agentRunning && current() === session) quiet.arm(session);
    });
    updates = sessionUpdates;
    session.store.subscribe((state, previous) => {
      const rebuilt = previous.activity !== "idle" && previous.activity !== "updating" && state.activity === "idle";
      if (rebuilt && state.lastAction?.outcome === "OK") sessionUpdates.rebuilt(previous.activityStartedAt);
      if (state.freshness !== "fresh" || previous.freshness === "fresh") return;
      session.tracker.remember();
      if (session.notices.has("drift-detected"))
        session.notices.once(
          "drift-resolved",
          `The graph of ${session.root} is fresh again: pi-cgc brought it up to date and verified it.`
        );
    });
    let watchDecided = false;
    session.onProbe((verdict) => {
      if (verdict.drift?.changed && session.config()["lifecycle.syncOnStart"] && !quiet.syncing)
        quiet.maybeAuto(session);
      if (watchDecided) return;
      watchDecided = true;
      startWatcherLater(session, {
        isCurrent: () => current() === session,
        updates: sessionUpdates,
        started: (started) => {
          watcher = started;
        },
        died: () => catchUp(session)
      });
    });
  });
  pi.on("session_shutdown", async () => {
    quiet.cancel();
    otherWriters.stop();
    await updates?.stop();
  });
  pi.on("tool_result", (event, ctx) => {
    const session = current();
    if (!session || !isReady(session.store.get())) return;
    if (isEditToolResult2(event) || isWriteToolResult2(event)) {
      const raw = event.input.path;
      if (typeof raw !== "string") return;
      const absolute = resolve3(ctx.cwd, raw.replace(/^@/, ""));
      observe(session, [join3(canonical(dirname2(absolute)), basename3(absolute))]);
    } else if (event.toolName === "bash") {
      checkFiles(session);
    }
  });
  pi.on("before_agent_start", () => {
    agentRunning = true;
    quiet.cancel();
    const session = current();
    if (session && isReady(session.store.get())) checkFiles(session);
  });
  pi.on("agent_end", () => {
    agentRunning = false;
    const session = current();
    if (session) quiet.arm(session);
  });
  return {
    /** For a graph tool: wait (bounded) for a pending update; the changed paths still not in the graph. */
    settle: (signal) => updates?.settle(signal) ?? Promise.resolve([]),
    /** For a graph tool: each target function's possible call sites from the engine, or why they are unknown. */
    possibleCallers: (targets, signal) => updates?.possible(targets, signal) ?? Promise.resolve({ unknown: "pi-cgc is not active in this session" }),
    /** Files pi-cgc wrote into the workspace itself (/cgc report, a project settings save): observed as edits are. */
    written: (paths) => {
      const session = current();
      if (session && isReady(session.store.get())) observe(session, paths);
    },
    /** The engine's line in /cgc status. */
    describeEngine: () => updates?.describe() ?? "no session",
    /** `/cgc sync`: not budgeted, and ends the episode like an automatic one. */
    async manualSync(_ctx) {
      const session = current();
      if (!session) return "pi-cgc is not active.";
      const state = session.store.get();
      if (state.readiness !== "ready") return `Nothing to sync: cgc is ${state.readiness} (${state.reason}).`;
      quiet.cancel();
      checkFiles(session);
      return quiet.sync(session, false);
    }
  };
}

// src/lifecycle/first-probe.ts
function trackFirstProbe(session) {
  let settled = false;
  const first = session.refresh().then(
    () => {
      settled = true;
    },
    () => {
      settled = true;
    }
  );
  return {
    get settled() {
      return settled;
    },
    async wait(boundMs) {
      if (settled) return;
      let timer;
      const bound = new Promise((resolve6) => {
        timer = setTimeout(resolve6, boundMs);
      });
      await Promise.race([first, bound]);
      clearTimeout(timer);
    }
  };
}

// src/lifecycle/session.ts
import { writeSync } from "node:fs";

// src/cgc/output.ts
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join as join4, resolve as resolve4 } from "node:path";
import { stripVTControlCharacters } from "node:util";
import { formatSize, truncateHead, truncateTail } from "@mariozechner/pi-coding-agent";
function stripControl(text) {
  const visible = stripVTControlCharacters(text.replace(/\r\n/g, "\n"));
  let out = "";
  for (const char of visible) {
    const code = char.charCodeAt(0);
    if (code === 9 || code === 10 || code >= 32 && code !== 127 && !(code >= 128 && code < 160)) out += char;
  }
  return out;
}
var SECRET_PATTERNS = [
  [/-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?(?:-----END [A-Z ]*PRIVATE KEY-----|$)/g, "[REDACTED private key]"],
  [/\b(AKIA|ASIA)[0-9A-Z]{16}\b/g, "[REDACTED aws key]"],
  [/\bgh[pousr]_[A-Za-z0-9]{36,}\b/g, "[REDACTED github token]"],
  [/\bgithub_pat_[A-Za-z0-9_]{40,}\b/g, "[REDACTED github token]"],
  [/\bglpat-[A-Za-z0-9_-]{20,}\b/g, "[REDACTED gitlab token]"],
  [/\bsk-(?:ant-|proj-)?[A-Za-z0-9_-]{20,}\b/g, "[REDACTED api key]"],
  [/\bxox[abposr]-[A-Za-z0-9-]{10,}\b/g, "[REDACTED slack token]"],
  [/\bAIza[0-9A-Za-z_-]{35}\b/g, "[REDACTED google key]"],
  [/\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\b/g, "[REDACTED jwt]"],
  [/\b(Bearer|Basic)\s+[A-Za-z0-9._~+/=-]{16,}/g, "$1 [REDACTED]"],
  [/(:\/\/[^:/\s@]+:)[^@\s/]+@/g, "$1[REDACTED]@"],
  [
    /\b([A-Za-z0-9_]*(?:PASSWORD|PASSWD|SECRET|TOKEN|API_KEY|APIKEY|ACCESS_KEY|PRIVATE_KEY)[A-Za-z0-9_]*)(\s*[=:]\s*)(["']?)([^\s"',;]{4,})\3/gi,
    "$1$2$3[REDACTED]$3"
  ]
];
function redactSecrets(text) {
  let out = text;
  for (const [pattern, replacement] of SECRET_PATTERNS) out = out.replace(pattern, replacement);
  return out;
}
function createSpillDir(workspace) {
  let dir;
  let counter = 0;
  return {
    write(text) {
      dir ??= makePrivateDir(workspace);
      const path = join4(dir, `cgc-output-${++counter}.txt`);
      writeFileSync(path, text, { mode: 384 });
      chmodSync(path, 384);
      return path;
    },
    get dir() {
      return dir;
    },
    cleanup() {
      if (dir) rmSync(dir, { recursive: true, force: true });
      dir = void 0;
    }
  };
}
function makePrivateDir(workspace) {
  const dir = mkdtempSync(join4(tmpdir(), "pi-cgc-"));
  chmodSync(dir, 448);
  if (isWithin(resolve4(workspace), dir)) {
    throw new Error(`refusing to spill cgc output inside the workspace (${dir}); set TMPDIR elsewhere`);
  }
  return dir;
}
function applyOutputPolicy(raw, limits, spill) {
  const clean = redactSecrets(stripControl(raw));
  const originalBytes = Buffer.byteLength(clean, "utf8");
  const lines = clean.split("\n").length;
  if (originalBytes <= limits.maxBytes && lines <= limits.maxLines) {
    return { text: clean, truncated: false, originalBytes };
  }
  const half = { maxBytes: Math.floor(limits.maxBytes / 2), maxLines: Math.max(1, Math.floor(limits.maxLines / 2)) };
  const head = truncateHead(clean, half);
  const tail = truncateTail(clean, half);
  const spillPath = spill.write(clean);
  const omitted = originalBytes - head.outputBytes - tail.outputBytes;
  const marker = `[\u2026 output capped: ${formatSize(originalBytes)} (${lines} lines) in all, ${formatSize(Math.max(0, omitted))} omitted here; full text: ${spillPath} \u2026]`;
  return { text: `${head.content}
${marker}
${tail.content}`, truncated: true, originalBytes, spillPath };
}

// src/cgc/runner.ts
import { spawn as spawn2 } from "node:child_process";
import { existsSync as existsSync2 } from "node:fs";
import { PassThrough } from "node:stream";
var PINNED_ENV = {
  ENABLE_AUTO_WATCH: "false",
  COLUMNS: "10000",
  NO_COLOR: "1",
  PYTHONUNBUFFERED: "1",
  PYTHONSAFEPATH: "1"
};
var DEFAULT_CAPTURE_BYTES = 256 * 1024;
var DEFAULT_KILL_GRACE_MS = 2e3;
var LITE_START_HOLD_MS = 6e4;
var LITE_LONG_LIVED_WAIT_MS = 12e4;
var CONTEXT_SUBCOMMANDS = /* @__PURE__ */ new Set([
  "index",
  "update",
  "list",
  "stats",
  "query",
  "find",
  "analyze",
  "watch",
  "delete",
  "clean",
  "report",
  "bundle",
  "export",
  "diagram"
]);
function createRunner(options) {
  const captureBytes = options.captureBytes ?? DEFAULT_CAPTURE_BYTES;
  const killGraceMs = options.killGraceMs ?? DEFAULT_KILL_GRACE_MS;
  const live = /* @__PURE__ */ new Set();
  const inFlight = /* @__PURE__ */ new Map();
  let lockQueue = Promise.resolve();
  let spawnCount = 0;
  let closed = false;
  function argvFor(args) {
    const sub = args[0];
    const extra = sub && CONTEXT_SUBCOMMANDS.has(sub) ? options.subcommandArgs?.() ?? [] : [];
    return [...args, ...extra];
  }
  const isServer = (args) => args[0] === "mcp" && args[1] === "start";
  function refusalFor(args) {
    const sub = args[0];
    return sub && (CONTEXT_SUBCOMMANDS.has(sub) || isServer(args)) ? options.databaseRefusal?.() : void 0;
  }
  function envFor(extra, args = []) {
    const server = isServer(args) ? options.serverEnv?.() : void 0;
    const env = { ...options.env ?? process.env, ...server, ...extra };
    return { ...env, ...liteSocketOnlyEnv(env), ...PINNED_ENV };
  }
  function launch(program, argv, cwd, env, keepStdin) {
    spawnCount++;
    const child = spawn2(program, argv, {
      cwd,
      env,
      detached: true,
      // own process group: a stop reaches every helper cgc starts
      stdio: [keepStdin ? "pipe" : "ignore", "pipe", "pipe"],
      shell: false
    });
    live.add(child);
    registerChild(child, killGraceMs);
    child.once("close", () => {
      live.delete(child);
      unregisterChild(child);
    });
    return child;
  }
  function execute(argv, spec) {
    const started = Date.now();
    const program = spec.program?.path ?? options.executable;
    const what = spec.program?.name ?? `cgc ${argv[0] ?? ""}`;
    const done = (code, reason, partial) => ({
      ...notRun([program, ...argv], code, reason),
      durationMs: Date.now() - started,
      ...partial
    });
    if (closed) return Promise.resolve(done("CANCELLED", "the session ended"));
    if (spec.signal?.aborted) return Promise.resolve(done("CANCELLED", "cancelled before start"));
    if (!existsSync2(spec.cwd))
      return Promise.resolve(done("UNAVAILABLE", `working directory does not exist: ${spec.cwd}`));
    return new Promise((resolve6) => {
      const child = launch(program, argv, spec.cwd, spec.env, spec.longLived?.stdin === true);
      if (spec.daemonSocket) void adoptDaemon(child, spec.daemonSocket);
      spec.longLived?.onSpawn(child);
      const out = boundedCapture(captureBytes, (line) => spec.onLine?.(line, "stdout"));
      const err = boundedCapture(captureBytes, (line) => spec.onLine?.(line, "stderr"));
      let stoppedFor;
      let spawnError;
      const stopFor = (why) => {
        stoppedFor ??= why;
        void stopGroup(child, killGraceMs);
      };
      const timer = spec.budgetMs > 0 ? setTimeout(() => stopFor("TIMEOUT"), spec.budgetMs) : void 0;
      const onAbort = () => stopFor("CANCELLED");
      spec.signal?.addEventListener("abort", onAbort, { once: true });
      child.stdout?.on("data", (chunk) => out.push(chunk));
      child.stderr?.on("data", (chunk) => err.push(chunk));
      child.once("error", (error) => {
        spawnError = error;
      });
      child.once("close", (exitCode, exitSignal) => {
        if (timer) clearTimeout(timer);
        spec.signal?.removeEventListener("abort", onAbort);
        const captured = {
          exitCode,
          signal: exitSignal,
          stdout: out.text(),
          stderr: err.text(),
          truncated: out.truncated || err.truncated
        };
        if (spawnError) {
          const missing = spawnError.code === "ENOENT" || spawnError.code === "EACCES";
          const reason = `cannot run ${program}: ${spawnError.message}`;
          resolve6(done(missing ? "UNAVAILABLE" : "FAILED", reason, captured));
        } else if (stoppedFor === "TIMEOUT") {
          resolve6(done("TIMEOUT", `${what} took longer than ${spec.budgetMs} ms and was stopped`, captured));
        } else if (stoppedFor === "CANCELLED" || closed) {
          resolve6(done("CANCELLED", `${what} was ${spec.longLived ? "stopped" : "cancelled"}`, captured));
        } else {
          const classified = classify(captured, done, what);
          const exitedAlone = spec.longLived && classified.code === "OK";
          resolve6(
            exitedAlone ? done("FAILED", `${what} exited on its own (code ${exitCode ?? exitSignal})`, captured) : classified
          );
        }
      });
    });
  }
  function serialised(work) {
    const next = lockQueue.then(work, work);
    lockQueue = next.catch(() => void 0);
    return next;
  }
  function run(args, runOptions) {
    const argv = argvFor(args);
    const refused = refusalFor(args);
    if (refused) return Promise.resolve(notRun([options.executable, ...argv], "UNAVAILABLE", refused));
    const env = envFor(runOptions.env, args);
    const budget = runOptions.budgetMs ?? options.budgets[runOptions.kind];
    const through = runOptions.through;
    const key = JSON.stringify([through?.path, argv, runOptions.cwd, runOptions.env ?? {}]);
    const existing = inFlight.get(key);
    if (existing && !runOptions.onLine) return existing.join(runOptions.signal);
    const shared = shareCall((signal) => {
      const go = (daemonSocket) => execute(through ? [...through.leading, ...argv] : argv, {
        cwd: runOptions.cwd,
        env,
        budgetMs: budget,
        signal,
        onLine: runOptions.onLine,
        program: through && { path: through.path, name: through.name },
        daemonSocket
      });
      return runOptions.takesLock === false ? go() : serialised(() => throughLiteGate(argv, env, budget, signal, go));
    });
    inFlight.set(key, shared);
    shared.settled.then(() => inFlight.delete(key));
    return shared.join(runOptions.signal);
  }
  async function throughLiteGate(argv, env, budgetMs, signal, work) {
    if (!options.sharedDaemon?.()) return work();
    const hold = await liteTurn(argv, env, budgetMs > 0 ? budgetMs : LITE_LONG_LIVED_WAIT_MS, signal);
    if (!("release" in hold)) return hold;
    try {
      const socket = liteSocketPath(env, argv);
      const result = await work(await socketAnswers(socket) ? void 0 : socket);
      if (result.code !== "TIMEOUT") return result;
      const silence = await liteServerSilence(liteSocketPath(env, argv));
      return silence ? { ...result, reason: `${result.reason}. ${silence}` } : result;
    } finally {
      await daemonStops();
      hold.release();
    }
  }
  async function liteTurn(argv, env, waitMs, signal) {
    const started = Date.now();
    const hold = await acquireLiteGate(liteHome(env), waitMs, signal, () => closed);
    if (hold === "CANCELLED") return notRun([options.executable, ...argv], "CANCELLED", "cancelled before start");
    if (hold !== "TIMEOUT") return hold;
    const waitedMs = Date.now() - started;
    return {
      ...notRun(
        [options.executable, ...argv],
        "BUSY",
        `another pi-cgc process's cgc call on the shared FalkorDB Lite daemon did not end within ${Math.round(waitedMs / 1e3)} s`
      ),
      durationMs: waitedMs
    };
  }
  async function longLivedThroughLiteGate(argv, env, signal, work, onTurn = () => {
  }) {
    if (!options.sharedDaemon?.()) return work(() => {
    });
    const hold = await liteTurn(argv, env, LITE_LONG_LIVED_WAIT_MS, signal);
    if (!("release" in hold)) return hold;
    let released = false;
    const release = () => {
      if (released) return;
      released = true;
      hold.release();
    };
    onTurn(release);
    const socket = liteSocketPath(env, argv);
    const until = Date.now() + LITE_START_HOLD_MS;
    const watch = async () => {
      while (!released && Date.now() < until && !signal.aborted) {
        if (await socketAnswers(socket)) break;
        await new Promise((resolve6) => setTimeout(resolve6, 200));
      }
      release();
    };
    const exited = work(() => void watch(), await socketAnswers(socket) ? void 0 : socket);
    return exited.finally(release);
  }
  function startLongLived(args, opts) {
    const argv = opts.program ? args : argvFor(args);
    const controller = new AbortController();
    let child;
    const input = opts.stdin ? new PassThrough() : void 0;
    let shown = input ? { stdin: input, pid: void 0 } : void 0;
    const spawnHook = (c) => {
      child = c;
      if (input && c.stdin) {
        c.stdin.on("error", () => {
        });
        input.pipe(c.stdin);
        shown = new Proxy(c, { get: (target, key) => key === "stdin" ? input : Reflect.get(target, key, target) });
      } else shown = c;
    };
    const refused = refusalFor(args);
    const env = envFor(opts.env, args);
    let leaveTurn = () => {
    };
    const exited = refused ? Promise.resolve(notRun([options.executable, ...argv], "UNAVAILABLE", refused)) : longLivedThroughLiteGate(
      argv,
      env,
      controller.signal,
      (started, daemonSocket) => execute(argv, {
        cwd: opts.cwd,
        env,
        budgetMs: options.budgets.longLived,
        signal: controller.signal,
        onLine: opts.onLine,
        longLived: {
          stdin: opts.stdin === true,
          onSpawn: (c) => {
            spawnHook(c);
            started();
          }
        },
        program: opts.program,
        daemonSocket
      }),
      (release) => {
        leaveTurn = release;
      }
    );
    return {
      get pid() {
        return child?.pid;
      },
      leaveLiteTurn: () => leaveTurn(),
      get child() {
        return shown;
      },
      exited,
      stop: async () => {
        controller.abort();
        await exited;
      }
    };
  }
  async function close() {
    closed = true;
    await Promise.all([...live].map((child) => stopGroup(child, killGraceMs)));
    await daemonStops();
  }
  return {
    run,
    /**
     * Work that opens the embedded database outside a cgc child (pi-cgc's engine): it waits for, and holds
     * back, the calls that take the lock, so pi-cgc never meets its own lock.
     */
    exclusive: serialised,
    startLongLived,
    close,
    get spawnCount() {
      return spawnCount;
    },
    get liveCount() {
      return live.size;
    },
    get executable() {
      return options.executable;
    }
  };
}
function notRun(argv, code, reason) {
  return { code, argv, exitCode: null, signal: null, stdout: "", stderr: "", truncated: false, durationMs: 0, reason };
}
function classify(captured, done, what) {
  const all = `${captured.stdout}
${captured.stderr}`;
  if (detectBusy(all)) {
    return done("BUSY", "another cgc process holds the embedded database lock", captured);
  }
  if (captured.signal) return done("FAILED", `${what} was killed by ${captured.signal}`, captured);
  if (captured.exitCode !== 0) {
    const cause = detectCgcFailure(all) ?? firstErrorLine(all);
    return done("FAILED", oneLine(cause ?? `${what} exited with ${captured.exitCode}`), captured);
  }
  const failure = detectCgcFailure(all);
  if (failure) return done("FAILED", oneLine(failure), captured);
  return done("OK", "", captured);
}
function firstErrorLine(text) {
  const lines = text.split("\n").map((line) => line.trim());
  return lines.find((line) => /error|exception|not found|failed|✗/i.test(line)) ?? lines.findLast((line) => line !== "");
}
function oneLine(text, max = 300) {
  const line = text.replace(/\s+/g, " ").trim();
  return line.length > max ? `${line.slice(0, max - 1)}\u2026` : line;
}
function shareCall(start) {
  const controller = new AbortController();
  let waiting = 0;
  const settled = start(controller.signal);
  return {
    settled,
    join(signal) {
      waiting++;
      if (!signal) return settled;
      return new Promise((resolve6) => {
        const onAbort = () => {
          waiting--;
          if (waiting === 0) controller.abort();
          void settled.then((result) => resolve6({ ...result, code: "CANCELLED", reason: "cancelled by the caller" }));
        };
        if (signal.aborted) return onAbort();
        signal.addEventListener("abort", onAbort, { once: true });
        void settled.then((result) => {
          signal.removeEventListener("abort", onAbort);
          resolve6(result);
        });
      });
    }
  };
}
async function adoptDaemon(child, socket) {
  const running = () => child.exitCode === null && child.signalCode === null;
  while (running()) {
    const daemon = await socketAnswers(socket, 500) ? liteDaemonOf(socket) : void 0;
    if (daemon !== void 0) {
      if (running()) registerDaemon(child, daemon);
      return;
    }
    await new Promise((resolve6) => setTimeout(resolve6, 200).unref());
  }
}
function stopGroup(child, graceMs) {
  if (child.exitCode !== null || child.signalCode !== null || child.pid === void 0) {
    signalGroup(child.pid, "SIGKILL");
    return Promise.resolve();
  }
  const pid = child.pid;
  return new Promise((resolve6) => {
    const timers = [];
    child.once("close", () => {
      for (const timer of timers) clearTimeout(timer);
      signalGroup(pid, "SIGKILL");
      resolve6();
    });
    signalGroup(pid, "SIGINT");
    timers.push(setTimeout(() => signalGroup(pid, "SIGTERM"), graceMs));
    timers.push(setTimeout(() => signalGroup(pid, "SIGKILL"), graceMs * 2));
  });
}
function boundedCapture(limit, onLine) {
  const head = [];
  let headBytes = 0;
  let tail = [];
  let tailBytes = 0;
  let dropped = 0;
  let pending = "";
  return {
    push(chunk) {
      pending += chunk.toString("utf8");
      const lines = pending.split("\n");
      pending = lines.pop() ?? "";
      for (const line of lines) onLine(line.replace(/\r$/, ""));
      if (headBytes < limit) {
        const take = chunk.subarray(0, limit - headBytes);
        head.push(take);
        headBytes += take.length;
        chunk = chunk.subarray(take.length);
      }
      if (chunk.length === 0) return;
      tail.push(chunk);
      tailBytes += chunk.length;
      while (tailBytes > limit && tail.length > 0) {
        const first = tail[0];
        const excess = tailBytes - limit;
        if (first.length <= excess) {
          tail.shift();
          tailBytes -= first.length;
          dropped += first.length;
        } else {
          tail = [first.subarray(excess), ...tail.slice(1)];
          tailBytes -= excess;
          dropped += excess;
        }
      }
    },
    get truncated() {
      return dropped > 0;
    },
    text() {
      const marker = dropped > 0 ? `
[\u2026 ${dropped} bytes of cgc output not kept \u2026]
` : "";
      return Buffer.concat(head).toString("utf8") + marker + Buffer.concat(tail).toString("utf8");
    }
  };
}

// src/state/notices.ts
var HEADLESS_NOTICES = /* @__PURE__ */ new Set(["cgc-unavailable", "busy", "worktree-refused"]);
function createNoticeLedger(sink) {
  const shown = /* @__PURE__ */ new Map();
  return {
    /** Shows the notice unless this condition was already shown this session. Returns whether it was shown. */
    once(id, message, level = "info", variant = "") {
      const key = variant ? `${id}:${variant}` : id;
      if (shown.has(key)) return false;
      shown.set(key, message);
      if (sink.hasUI) sink.notify(message, level);
      else if (HEADLESS_NOTICES.has(id)) sink.stderr(`pi-cgc: ${message}`);
      return true;
    },
    has(id) {
      return [...shown.keys()].some((key) => key === id || key.startsWith(`${id}:`));
    },
    shown() {
      return shown;
    }
  };
}

// src/state/store.ts
function createStore(initial = initialState(), clock = Date.now) {
  let state = initial;
  const listeners = /* @__PURE__ */ new Set();
  return {
    get() {
      return state;
    },
    apply(transition) {
      const previous = state;
      state = transition(state, clock());
      if (state !== previous) for (const listener of listeners) listener(state, previous);
      return state;
    },
    subscribe(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    }
  };
}

// src/workspace/tracker.ts
import { mkdirSync as mkdirSync2, readFileSync as readFileSync4, renameSync, writeFileSync as writeFileSync2 } from "node:fs";
import { dirname as dirname3, relative, sep } from "node:path";
function createChangeTracker(env) {
  let root;
  let baseline;
  const look = () => {
    if (root === void 0) return [];
    const now = snapshotTree(root, baseline, cgcIgnoredDirs(env));
    const changed = baseline ? changedBetween(baseline, now) : [];
    baseline = now;
    return changed;
  };
  return {
    startDrift(probedRoot, indexedMs) {
      if (baseline && root === probedRoot) return { paths: look(), basis: "remembered tree" };
      root = probedRoot;
      const remembered = readSnapshot(graphLedger(env, root).treeFile);
      const now = snapshotTree(root, remembered?.files, cgcIgnoredDirs(env));
      baseline = now;
      if (remembered) {
        for (const [path, stamp] of now) {
          const unknown = isIgnoreFile(root, path) ? remembered.tracked < 1 : remembered.tracked < 2 && !trackedBefore(root, path) && stampTime(stamp) <= indexedMs;
          if (unknown) remembered.files.set(path, stamp);
        }
        return { paths: changedBetween(remembered.files, now), basis: "remembered tree" };
      }
      return { paths: Number.isNaN(indexedMs) ? [] : touchedAfter(now, indexedMs), basis: "file times" };
    },
    check: look,
    indexStarting(at) {
      let before = [];
      if (root === void 0) {
        root = at;
        baseline = snapshotTree(root, void 0, cgcIgnoredDirs(env));
      } else {
        before = look();
      }
      const start = baseline && new Map(baseline);
      const tracked = root;
      return {
        before,
        changedSince: () => {
          if (root !== tracked || !start) return [];
          look();
          return baseline ? changedBetween(start, baseline) : [];
        }
      };
    },
    walkedByCgc: () => root === void 0 ? () => false : walkedByCgc(root, cgcIgnoredDirs(env)),
    observed(paths) {
      if (!baseline) return;
      for (const path of paths) {
        const stamp = stampPath(path, baseline.get(path));
        if (stamp === void 0) baseline.delete(path);
        else baseline.set(path, stamp);
      }
    },
    remember() {
      if (!baseline || root === void 0) return;
      const path = graphLedger(env, root).treeFile;
      try {
        mkdirSync2(dirname3(path), { recursive: true });
        writeFileSync2(`${path}.tmp`, JSON.stringify({ root, tracked: TRACKED, files: [...baseline] }));
        renameSync(`${path}.tmp`, path);
      } catch {
      }
    }
  };
}
var TRACKED = 2;
function trackedBefore(root, path) {
  return isSourcePath(path.toLowerCase()) && !relative(root, path).split(sep).some((part) => part.startsWith("."));
}
function readSnapshot(path) {
  try {
    const record = JSON.parse(readFileSync4(path, "utf8"));
    if (!Array.isArray(record.files)) return void 0;
    const tracked = typeof record.tracked === "number" ? record.tracked : record.ignoreFiles === true ? 1 : 0;
    return { files: new Map(record.files), tracked };
  } catch {
    return void 0;
  }
}

// src/lifecycle/maintenance.ts
import { existsSync as existsSync3 } from "node:fs";
import { join as join5 } from "node:path";
function createMaintenance(deps) {
  const { store, notices, runner, tracker } = deps;
  let maintenance;
  const stoppedByBudget = () => {
    const note = deps.ledger().runNote();
    const ranForMs = note?.timedOutAfterMs;
    if (note === void 0 || ranForMs === void 0 || ranForMs < deps.config()["timeouts.maintenanceMs"])
      return void 0;
    return { what: note.what, ranForMs };
  };
  const fullIndexThrough = () => wholeIndexProgram({
    cgcVersion: deps.cgcVersion(),
    engineOn: deps.config()["freshness.engine"],
    executable: runner.executable,
    env: deps.env,
    cacheDir: deps.ledger().engineCacheDir,
    parseStore: { dir: deps.ledger().parseStoreDir, mb: deps.config()["engine.parseStoreMb"] }
  });
  const readBackStructure = async (what) => {
    const unlinked = await uncontainedCount(runner, deps.root());
    if (unlinked.kind !== "ok") {
      const reason = `the graph's structure could not be read back after the ${what} (${unlinked.reason})`;
      store.apply((state) => freshnessNotVerified(state, `${what}: ${reason}`));
    } else if (unlinked.value > 0) {
      const reason = UNCONTAINED_REASON(unlinked.value);
      store.apply((state) => freshnessNotVerified(state, `${what}: ${reason}`));
      notices.once("index-unverified", `The graph after cgc ${what} is possibly stale: ${reason}.`, "warning");
    }
  };
  const tellFailure = (result, what) => {
    if (result.code === "BUSY") {
      notices.once("skipped-busy", `cgc ${what} skipped: another cgc process holds the database lock.`, "warning");
    } else if (result.code !== "OK" && result.code !== "CANCELLED") {
      const message = result.code === "TIMEOUT" ? `cgc ${what} was stopped after ${formatElapsed(result.durationMs)} by its time budget (timeouts.maintenanceMs)` + (what === "sync" ? "; cgc rebuilds from scratch, so the graph may now be incomplete." : ".") : `cgc ${what} failed (${result.code}): ${result.reason}`;
      notices.once("index-failed", message, "error", what);
    }
  };
  const run = (kind, args, what, estimate) => {
    if (maintenance) return maintenance;
    const root = deps.root();
    const index = kind === "syncing" ? void 0 : tracker.indexStarting(root);
    const before = index?.before ?? [];
    const cgcignore = join5(root, ".cgcignore");
    const hadCgcignore = existsSync3(cgcignore);
    if (before.length > 0) store.apply((state) => changesObserved(state, before));
    store.apply((state, now) => maintenanceStarted(state, kind, what, now, estimate));
    const ledger = deps.ledger();
    const settleNote = ledger.runStarted(what);
    ledger.writtenElsewhere();
    const through = fullIndexThrough();
    const main = what === "index" && through ? deps.worktree.fromMain() : void 0;
    const indexArgs = main && "root" in main ? [...args, "--from-main", main.root, "--main-cache-dir", main.cacheDir] : args;
    const prepared = what === "index" ? deps.worktree.createContext(runner, deps.backend()) : Promise.resolve(void 0);
    maintenance = prepared.then(
      (failed) => failed ?? runner.run(indexArgs, {
        kind: "maintenance",
        cwd: root,
        through,
        onLine: (line) => {
          const progress = progressOf(line);
          if (progress) store.apply((state) => maintenanceProgress(state, progress.text, progress.totalMs));
        }
      })
    ).then(async (result) => {
      const plain = result.code === "OK" && args[1] !== "--force";
      const skipped = plain && indexSkipped(result.stdout);
      settleNote(skipped ? "SKIPPED" : result.code, result.durationMs);
      if (deps.disposed()) return result;
      if (result.code === "OK" && !hadCgcignore) tracker.observed([cgcignore]);
      const resumed = plain ? indexResumed(result.stdout) : void 0;
      const during = result.code === "OK" && !skipped && index ? index.changedSince().filter((path) => hadCgcignore || path !== cgcignore) : [];
      store.apply((state, now) => {
        const settled = maintenanceSettled(
          state,
          skipped ? "SKIPPED" : result.code,
          now,
          result.code === "OK" ? void 0 : `${what}: ${result.reason}`
        );
        return during.length > 0 ? changesObserved(settled, during, `changed while cgc's ${what} ran`) : settled;
      });
      if (resumed)
        store.apply(
          (state) => graphWrittenOutside(
            state,
            `cgc index resumed a graph another run left unfinished ("${resumed.trim()}") and kept what that run wrote`
          )
        );
      tellFailure(result, what);
      const inPart = result.code === "OK" ? indexInPart(result.stdout) : void 0;
      if (inPart)
        notices.once(
          "index-partial",
          `cgc ${what}: ${inPart}. cgc's own index leaves them the same way: what comes before that docstring, without their links.`,
          "warning"
        );
      if (result.code === "OK" && !skipped && kind !== "syncing") await readBackStructure(what);
      await deps.refresh();
      return result;
    }).finally(() => {
      maintenance = void 0;
    });
    return maintenance;
  };
  return {
    run,
    get running() {
      return maintenance !== void 0;
    },
    fullIndexThrough,
    stoppedByBudget
  };
}
function progressOf(line) {
  const trimmed = line.trim();
  const own = /^pi-cgc index: (.+?)(?: · ~(\d+)s in all)?$/.exec(trimmed);
  if (own) return { text: own[1], ...own[2] ? { totalMs: Number(own[2]) * 1e3 } : {} };
  if (/^Deleting existing index/i.test(trimmed)) return { text: "deleting the old graph" };
  if (/^Starting indexing|^Re-indexing/i.test(trimmed)) return { text: "reading and writing files" };
  const scanned = /Total scanned files\s*\|\s*(\d+)/.exec(trimmed);
  if (scanned) return { text: `${scanned[1]} files written` };
  return void 0;
}

// src/lifecycle/provenance.ts
function createGraphProvenance(ledger) {
  let seen = false;
  let known;
  return {
    check(indexedAt, hasGraph) {
      const first = !seen;
      seen = true;
      const previous = known;
      known = hasGraph ? indexedAt : void 0;
      if (first || !hasGraph || indexedAt === void 0 || indexedAt === previous) return void 0;
      return outside(indexedAt);
    },
    ownWrite(before, after, window) {
      const previous = known;
      if (after) known = after;
      if (!seen || !before || previous === void 0 || before === previous) return void 0;
      return outside(before, window);
    }
  };
  function outside(stamp, except) {
    const stampMs = Date.parse(stamp);
    if (Number.isNaN(stampMs) || ledger().writtenByPiCgc(stampMs, except)) return void 0;
    return `the graph was written at ${stamp} by another cgc process, not by pi-cgc (a cgc watch, an MCP server or a cgc command), and such a write is not known to leave what a full index would`;
  }
}

// src/lifecycle/announce.ts
function verdictNotice(facts) {
  const { verdict, state, previous, root, worktree } = facts;
  switch (state.readiness) {
    case "unavailable":
      if (worktree.kind === "refused") return void 0;
      return {
        id: "cgc-unavailable",
        message: `cgc is not available: ${verdict.reason}. Install it with \`pipx install codegraphcontext\`, or set cgc.executable.`,
        level: "warning"
      };
    case "unindexed": {
      const stopped = facts.stoppedByBudget();
      if (stopped)
        return {
          id: "unindexed",
          message: `No complete code graph for ${root}: the last pi-cgc ${stopped.what} was stopped after ${formatElapsed(stopped.ranForMs)} by its time budget (timeouts.maintenanceMs) before it finished. Raise timeouts.maintenanceMs, then run /cgc index.`,
          level: "warning"
        };
      if (facts.autoCreate) return void 0;
      const pending = worktree.kind === "pending" ? worktree.name : void 0;
      return {
        id: "unindexed",
        message: pending ? `No code graph for ${root} yet: this worktree's CGC named context ${pending} does not exist. Run /cgc index to create it and build the graph, or set lifecycle.autoCreate to true.` : `No code graph for ${root} yet. Run /cgc index to build it, or set lifecycle.autoCreate to true.`
      };
    }
    case "busy":
      return {
        id: "busy",
        message: `cgc is busy: ${verdict.reason}. pi-cgc does not force it; /cgc status re-checks.`,
        level: "warning"
      };
    case "unknown":
      return { id: "probe-unknown", message: `cgc's state is unknown: ${verdict.reason}`, level: "warning" };
    case "corrupt":
      return { id: "corrupt", message: `cgc reports a damaged graph: ${verdict.reason}`, level: "error" };
    case "ready": {
      if (verdict.drift?.changed)
        return {
          id: "drift-detected",
          message: `The graph of ${root} is possibly stale: ${verdict.drift.detail}.`,
          level: "info"
        };
      const repo = state.facts?.repository;
      const wasIndexing = previous.readiness === "indexing" || previous.lastAction?.what === "index";
      const backend = shownBackend(state.facts?.reportedBackend, facts.backend)?.name ?? "backend unknown";
      return {
        id: "indexed",
        message: `${wasIndexing ? "Indexed" : "cgc ready"}: ${root} \u2014 ${repo?.files ?? "?"} files, ${repo?.functions ?? "?"} functions (${backend}).`
      };
    }
    case "indexing":
      return void 0;
  }
}

// src/workspace/git.ts
import { readFileSync as readFileSync5, statSync } from "node:fs";
import { isAbsolute, join as join6, resolve as resolve5 } from "node:path";
function readGitDirs(root) {
  const dotGit = join6(root, ".git");
  let isDir;
  try {
    isDir = statSync(dotGit).isDirectory();
  } catch {
    return { ok: false, notGit: true };
  }
  if (isDir) return { ok: true, value: { gitDir: dotGit, commonDir: dotGit } };
  const pointer = /^gitdir:\s*(.+?)\s*$/m.exec(readText2(dotGit) ?? "")?.[1];
  if (!pointer) return { ok: false, error: `${dotGit} is a file without a "gitdir:" line` };
  const gitDir = isAbsolute(pointer) ? pointer : resolve5(root, pointer);
  const id = /[/\\]worktrees[/\\]([^/\\]+)[/\\]?$/.exec(gitDir)?.[1];
  const common = readText2(join6(gitDir, "commondir"))?.trim();
  if (!common) {
    const isGitDir = readText2(join6(gitDir, "HEAD")) !== void 0;
    if (isGitDir && !id) return { ok: true, value: { gitDir, commonDir: gitDir } };
    const why = isGitDir ? "has no commondir file" : "is not a git directory";
    return { ok: false, error: `${dotGit} points to ${gitDir}, which ${why}` };
  }
  const commonDir = isAbsolute(common) ? common : resolve5(gitDir, common);
  return { ok: true, value: { gitDir, commonDir, worktreeId: id } };
}
function readHeadCommit(root) {
  const dirs = readGitDirs(root);
  if (!dirs.ok) return void 0;
  const head = readText2(join6(dirs.value.gitDir, "HEAD"))?.trim();
  if (!head) return void 0;
  if (/^[0-9a-f]{40}$/.test(head)) return head;
  const ref = /^ref:\s*(\S+)$/.exec(head)?.[1];
  if (!ref) return void 0;
  for (const dir of [dirs.value.gitDir, dirs.value.commonDir]) {
    const loose = readText2(join6(dir, ref))?.trim();
    if (loose && /^[0-9a-f]{40}$/.test(loose)) return loose;
  }
  const packed = readText2(join6(dirs.value.commonDir, "packed-refs")) ?? "";
  for (const line of packed.split("\n")) {
    const [sha, name] = line.trim().split(" ");
    if (name === ref && sha && /^[0-9a-f]{40}$/.test(sha)) return sha;
  }
  return void 0;
}
function readText2(path) {
  try {
    return readFileSync5(path, "utf8");
  } catch {
    return void 0;
  }
}

// src/lifecycle/probe.ts
var REPOSITORIES_QUERY = "MATCH (r:Repository) OPTIONAL MATCH (r)-[:CONTAINS*1..]->(f:File) OPTIONAL MATCH (f)-[:CONTAINS]->(fn:Function) OPTIONAL MATCH (f)-[:CONTAINS]->(c:Class) RETURN r.path AS path, r.name AS name, r.indexed_at AS indexed_at, r.commit_hash AS commit_hash, count(DISTINCT f) AS files, count(DISTINCT fn) AS functions, count(DISTINCT c) AS classes, collect(DISTINCT f.language) AS languages";
async function probeReadiness(input) {
  const { runner, cwd } = input;
  const spawnsBefore = runner.spawnCount;
  const installed = input.knownVersion === void 0 && typeof runner.executable === "string" ? installedCgcVersion(runner.executable, input.env) : void 0;
  const knownVersion = input.knownVersion ?? (installed && versionOf(`CodeGraphContext ${installed}
`));
  const versionCall = knownVersion === void 0 ? runner.run(["--version"], { kind: "probe", cwd, takesLock: false }) : Promise.resolve(void 0);
  const backendCall = input.knownBackend === void 0 ? detectCgcBackend({ env: input.env, runner, cwd }) : input.knownBackend;
  const queryCall = input.noGraph === void 0 ? runner.run(["query", REPOSITORIES_QUERY], { kind: "probe", cwd }) : Promise.resolve(void 0);
  const [version, backend, query] = await Promise.all([versionCall, backendCall, queryCall]);
  const fallbackRoot = resolveWorkspaceRoot(cwd);
  const outcome = (verdict, root2 = fallbackRoot, repositories2 = []) => ({
    verdict,
    root: root2,
    backend,
    repositories: repositories2,
    settled: true
  });
  const failedToRun = [version, query].find((call) => call?.code === "UNAVAILABLE");
  if (failedToRun) return outcome({ readiness: "unavailable", reason: failedToRun.reason });
  const decisive = query ?? version;
  if (decisive?.code === "CANCELLED")
    return { ...outcome({ readiness: "unknown", reason: decisive.reason }), settled: false };
  const cgcVersion = knownVersion ?? (version ? versionOf(`${version.stderr}
${version.stdout}`) : void 0);
  const facts = (repository2, repositoryCount) => ({
    cgcVersion,
    backend: backend ?? void 0,
    reportedBackend: query ? reportedBackend(query.stderr) : void 0,
    repository: repository2,
    repositoryCount,
    takenAt: Date.now(),
    spawns: runner.spawnCount - spawnsBefore
  });
  if (query === void 0) return outcome({ readiness: "unindexed", reason: input.noGraph ?? "", facts: facts() });
  if (query.code === "BUSY") {
    return outcome({ readiness: "busy", reason: query.reason, facts: facts() });
  }
  if (query.code === "TIMEOUT") return outcome({ readiness: "unknown", reason: query.reason, facts: facts() });
  const damage = query.code === "FAILED" ? detectDamagedDatabase(`${query.stdout}
${query.stderr}`) : void 0;
  if (damage)
    return outcome({ readiness: "corrupt", reason: `cgc cannot open its database: ${damage}`, facts: facts() });
  if (query.code !== "OK") {
    return outcome({ readiness: "unknown", reason: `the graph query failed: ${query.reason}`, facts: facts() });
  }
  const parsed = parseQueryJson(query.stdout);
  if (parsed.kind !== "ok") {
    return outcome({
      readiness: "unknown",
      reason: `cgc's answer could not be read: ${parsed.reason}`,
      facts: facts()
    });
  }
  const records = parsed.value.map(toRepositoryFacts).filter((repo) => repo !== null);
  const root = resolveWorkspaceRoot(
    cwd,
    records.map((repo) => repo.path),
    richPrinted
  );
  const isRoot = (repo) => repo.path === root || repo.path === richPrinted(root);
  const repositories = records.filter((repo) => repo.files !== 0);
  const found = repositories.find(isRoot);
  const repository = found && { ...found, path: root };
  if (!repository) {
    return outcome(
      {
        readiness: "unindexed",
        reason: records.some(isRoot) ? `the graph holds only an empty record for ${root} (an index that did not finish, or no file cgc reads)` : `the graph has no repository at ${root}`,
        facts: facts(void 0, repositories.length)
      },
      root,
      repositories
    );
  }
  return outcome(
    {
      readiness: "ready",
      reason: `indexed (${repository.files ?? "?"} files)`,
      facts: facts(repository, repositories.length),
      drift: startDrift(root, repository, input.env, input.fileDrift)
    },
    root,
    repositories
  );
}
function versionOf(text) {
  const parsed = parseVersion(text);
  return parsed.kind === "ok" ? parsed.value.version : void 0;
}
function toRepositoryFacts(row) {
  if (typeof row.path !== "string") return null;
  const count2 = (value) => typeof value === "number" && Number.isFinite(value) ? value : void 0;
  const text = (value) => typeof value === "string" && value !== "" ? value : void 0;
  return {
    path: row.path,
    name: text(row.name),
    indexedAt: text(row.indexed_at),
    commit: text(row.commit_hash),
    files: count2(row.files),
    functions: count2(row.functions),
    classes: count2(row.classes),
    languages: Array.isArray(row.languages) ? row.languages.filter((lang) => typeof lang === "string").sort() : void 0
  };
}
function startDrift(root, repository, env, fileDrift) {
  const unfinished = graphLedger(env, root).runNote();
  const head = readHeadCommit(root);
  const indexedMs = repository.indexedAt ? Date.parse(repository.indexedAt) : Number.NaN;
  const details = [];
  if (head && repository.commit && head !== repository.commit) {
    details.push(`HEAD moved from ${repository.commit.slice(0, 12)} to ${head.slice(0, 12)}`);
  }
  const { paths, basis } = fileDrift(root, indexedMs);
  if (paths.length > 0)
    details.push(
      basis === "file times" ? `${count(paths.length, "file")} written after indexing` : `${count(paths.length, "file")} changed since the graph was last verified`
    );
  if (Number.isNaN(indexedMs)) details.push("the graph records no index time");
  if (unfinished) details.push(`a pi-cgc ${unfinished.what} started ${unfinished.startedAt} has not finished`);
  return { changed: details.length > 0, paths, detail: details.join("; ") };
}

// src/lifecycle/readiness.ts
function createReadiness(deps) {
  const { runner, store, notices, worktree, facts } = deps;
  const handlers = /* @__PURE__ */ new Set();
  let probing;
  let wholeOnLite;
  const withOutsideWrite = (verdict) => {
    if (verdict.readiness !== "ready" && verdict.readiness !== "unindexed") return verdict;
    const repository = verdict.readiness === "ready" ? verdict.facts?.repository : void 0;
    const outside = deps.provenance.check(repository?.indexedAt, repository !== void 0);
    if (!outside) return verdict;
    const detail = [verdict.drift?.changed ? verdict.drift.detail : "", outside].filter(Boolean).join("; ");
    return { ...verdict, drift: { changed: true, paths: verdict.drift?.paths ?? [], detail } };
  };
  const unlinkedOnLite = async (verdict) => {
    const indexedAt = verdict.facts?.repository?.indexedAt;
    if (verdict.readiness !== "ready" || verdict.facts?.reportedBackend?.name !== "falkordb") return 0;
    if (indexedAt !== void 0 && indexedAt === wholeOnLite) return 0;
    const unlinked = await uncontainedCount(runner, facts.root);
    if (unlinked.kind !== "ok") return 0;
    if (unlinked.value === 0) wholeOnLite = indexedAt;
    return unlinked.value;
  };
  const probe = async () => {
    const scope = await worktree.resolve(runner);
    if (deps.disposed()) return;
    const probed = scope.verdict ? {
      verdict: scope.verdict,
      root: worktree.root ?? facts.root,
      backend: facts.backend ?? null,
      repositories: [],
      settled: true
    } : await probeReadiness({
      runner,
      cwd: deps.cwd,
      env: deps.env,
      knownBackend: facts.backend,
      knownVersion: facts.cgcVersion,
      noGraph: scope.noGraph,
      fileDrift: deps.tracker.startDrift
    });
    if (deps.disposed() || !probed.settled) return;
    const refused = worktree.refuseServerBackend(probed.backend);
    const outcome = refused ? { ...probed, verdict: refused, repositories: [] } : probed;
    facts.backend = outcome.backend;
    facts.cgcVersion = outcome.verdict.facts?.cgcVersion ?? facts.cgcVersion;
    facts.repositories = outcome.repositories;
    facts.root = outcome.root;
    const previous = store.get();
    const verdict = withOutsideWrite(outcome.verdict);
    const unlinked = await unlinkedOnLite(verdict);
    if (deps.disposed()) return;
    store.apply((state, now) => {
      const settled = probeSettled(state, verdict, now);
      return unlinked ? graphNeedsRebuild(settled, UNCONTAINED_REASON(unlinked)) : settled;
    });
    if (unlinked)
      notices.once(
        "index-unverified",
        `The graph of ${facts.root} is possibly stale: ${UNCONTAINED_REASON(unlinked)}.`,
        "warning",
        "start"
      );
    if (verdict !== outcome.verdict) {
      store.apply((state) => graphWrittenOutside(state, verdict.drift?.detail ?? ""));
      deps.ledger().writtenElsewhere();
    }
    const notice = verdictNotice({
      verdict,
      state: store.get(),
      previous,
      root: facts.root,
      backend: facts.backend,
      worktree: worktree.state,
      autoCreate: deps.config()["lifecycle.autoCreate"],
      stoppedByBudget: deps.maintenance.stoppedByBudget
    });
    if (notice) notices.once(notice.id, notice.message, notice.level);
    if (outcome.verdict.readiness === "unindexed" && deps.config()["lifecycle.autoCreate"] && !deps.maintenance.stoppedByBudget()) {
      void deps.maintenance.run("indexing", ["index", facts.root], "index");
    }
    for (const handler of handlers) handler(verdict);
  };
  return {
    refresh() {
      probing ??= probe().finally(() => {
        probing = void 0;
      });
      return probing;
    },
    onProbe(handler) {
      handlers.add(handler);
      return () => handlers.delete(handler);
    }
  };
}

// src/lifecycle/worktree-scope.ts
import { existsSync as existsSync5 } from "node:fs";
import { dirname as dirname4 } from "node:path";

// src/workspace/worktree.ts
import { createHash as createHash2 } from "node:crypto";
import { existsSync as existsSync4, linkSync, mkdirSync as mkdirSync3, readdirSync as readdirSync2, readFileSync as readFileSync6, renameSync as renameSync2, rmSync as rmSync2, writeFileSync as writeFileSync3 } from "node:fs";
import { join as join7 } from "node:path";
function detectWorktree(cwd) {
  const root = gitToplevel(cwd);
  if (!root) return { kind: "not-git" };
  const dirs = readGitDirs(root);
  if (!dirs.ok) return "notGit" in dirs ? { kind: "not-git" } : { kind: "malformed", root, error: dirs.error };
  const { commonDir, worktreeId } = dirs.value;
  if (!worktreeId) return { kind: "main", root };
  return { kind: "linked", root, identity: { commonDir: canonical(commonDir), worktreeId } };
}
function contextNameFor(identity2) {
  const slug = identity2.worktreeId.toLowerCase().replace(/[^a-z0-9._-]+/g, "-").replace(/[-._]*[-.][-._]*/g, (run) => run === "." || run === "_" ? run : "-").replace(/^[-.]+|[-.]+$/g, "").slice(0, 32).replace(/[-.]+$/, "") || "worktree";
  const hash = createHash2("sha256").update(`${identity2.commonDir}\0${identity2.worktreeId}`).digest("hex");
  return `wt-${slug}-${hash.slice(0, 8)}`;
}
function sameIdentity(a, b) {
  return a.commonDir === b.commonDir && a.worktreeId === b.worktreeId;
}
function worktreeExists(identity2) {
  return existsSync4(join7(identity2.commonDir, "worktrees", identity2.worktreeId));
}
function worktreeRecordDir(agentDir2) {
  return join7(agentDir2, "cgc-worktrees");
}
function readRecord(dir, name) {
  const path = join7(dir, `${name}.json`);
  let text;
  try {
    text = readFileSync6(path, "utf8");
  } catch (error) {
    if (error.code === "ENOENT") return { ok: true };
    return { ok: false, error: `${path} cannot be read: ${error.message}` };
  }
  try {
    const record = JSON.parse(text);
    return isRecord(record) ? { ok: true, record } : { ok: false, error: `${path} is not a complete pi-cgc record` };
  } catch (error) {
    return { ok: false, error: `${path} is not valid JSON (${error.message})` };
  }
}
function readRecords(dir) {
  const records = /* @__PURE__ */ new Map();
  let files;
  try {
    files = readdirSync2(dir);
  } catch {
    return records;
  }
  for (const file of files) {
    if (!file.endsWith(".json")) continue;
    const name = file.slice(0, -5);
    const read = readRecord(dir, name);
    if (read.ok && read.record) records.set(name, read.record);
  }
  return records;
}
function isRecord(value) {
  const record = value;
  return typeof record === "object" && record !== null && typeof record.commonDir === "string" && typeof record.worktreeId === "string" && typeof record.path === "string" && typeof record.createdAt === "string";
}
function writeRecord(dir, name, record, claim = false) {
  const path = join7(dir, `${name}.json`);
  const aside = `${path}.${process.pid}.${Date.now()}.tmp`;
  try {
    mkdirSync3(dir, { recursive: true });
    writeFileSync3(aside, `${JSON.stringify(record, null, 2)}
`, { mode: 384 });
    if (claim) claimPath(aside, path);
    else renameSync2(aside, path);
    return { ok: true };
  } catch (error) {
    if (claim && error.code === "EEXIST") {
      const existing = readRecord(dir, name);
      if (existing.ok && existing.record && sameIdentity(existing.record, record)) return { ok: true };
      return existing.ok ? { ok: false, error: `${path} was just written for another worktree`, taken: existing.record } : existing;
    }
    return { ok: false, error: `${path} could not be written: ${error.message}` };
  } finally {
    removeAside(aside);
  }
}
function removeAside(aside) {
  try {
    rmSync2(aside, { force: true });
  } catch {
  }
}
function claimPath(aside, path) {
  try {
    linkSync(aside, path);
  } catch (error) {
    const code = error.code;
    if (code !== "EPERM" && code !== "ENOTSUP" && code !== "ENOSYS") throw error;
    writeFileSync3(path, readFileSync6(aside), { flag: "wx", mode: 384 });
  }
}
function removeRecord(dir, name) {
  rmSync2(join7(dir, `${name}.json`), { force: true });
}
function ownershipOf(record, identity2) {
  if (!record) return { kind: "unrecorded" };
  return sameIdentity(record, identity2) ? { kind: "recorded", record } : { kind: "mismatch", record };
}
function orphanedContexts(records) {
  return [...records].filter(([, record]) => !worktreeExists(record));
}
function describeIdentity(identity2, path) {
  return `worktree "${identity2.worktreeId}" of ${identity2.commonDir}${path ? ` (at ${path})` : ""}`;
}

// src/lifecycle/worktree-scope.ts
function createWorktreeScope(options) {
  const { cwd, notices } = options;
  const isolating = options.mode === "isolate";
  const records = worktreeRecordDir(agentDir(options.env));
  let info;
  const worktree = () => {
    info ??= detectWorktree(cwd);
    return info;
  };
  const linked = () => {
    const found = worktree();
    return isolating && found.kind === "linked" ? { ...found, name: contextNameFor(found.identity) } : void 0;
  };
  let state = initialState2();
  let listed;
  let firstResolve = true;
  function initialState2() {
    if (!isolating) return { kind: "shared", why: "worktree.mode is off" };
    const found = worktree();
    switch (found.kind) {
      case "not-git":
        return { kind: "shared", why: "not a git repository" };
      case "main":
        return { kind: "shared", why: "the main checkout" };
      case "malformed":
        return { kind: "shared", why: `unreadable worktree pointer (${found.error})` };
      case "linked":
        return { kind: "checking", name: contextNameFor(found.identity) };
    }
  }
  const cwdFor = () => {
    const found = worktree();
    return found.kind === "not-git" ? cwd : found.root;
  };
  async function listContexts(runner) {
    if (listed) return { list: listed };
    const result = await runner.run(["context", "list"], { kind: "probe", cwd: cwdFor(), takesLock: false });
    if (result.code !== "OK") return { code: result.code, reason: result.reason };
    const parsed = parseContextList(`${result.stderr}
${result.stdout}`);
    if (parsed.kind !== "ok") return { code: "FAILED", reason: `cgc context list could not be read: ${parsed.reason}` };
    listed = parsed.value;
    return { list: listed };
  }
  function refuse(name, reason) {
    state = { kind: "refused", name, reason };
    notices.once("worktree-refused", reason, "error", name);
    return { verdict: { readiness: "unavailable", reason } };
  }
  async function reportOrphans(runner) {
    const orphans = orphanedContexts(readRecords(records));
    if (orphans.length === 0) return;
    const listing = await listContexts(runner);
    if (!("list" in listing)) return;
    for (const [name, record] of orphans) {
      const context = listing.list.contexts.find((entry) => entry.name === name);
      if (!context) {
        removeRecord(records, name);
        continue;
      }
      if (record.orphanNoticeAt) continue;
      notices.once(
        "worktree-orphaned",
        `The git ${describeIdentity(record, record.path)} no longer exists, but its CGC named context ${name} is still there with its graph. pi-cgc deletes nothing on its own: to remove it, ask the agent to use the cgc_contexts tool (action delete, name ${name}), which asks you first; cgc keeps the database files (${context.dbPath}).`,
        "warning",
        name
      );
      writeRecord(records, name, { ...record, orphanNoticeAt: (/* @__PURE__ */ new Date()).toISOString() });
    }
  }
  async function resolve6(runner) {
    if (!isolating) return {};
    const found = worktree();
    if (firstResolve) {
      firstResolve = false;
      if (found.kind === "malformed") {
        notices.once(
          "worktree-malformed",
          `${found.root} has a .git file pi-cgc cannot follow (${found.error}); it is treated as a plain folder, without worktree isolation.`,
          "warning"
        );
      }
      await reportOrphans(runner);
    }
    const here = linked();
    if (!here) return {};
    if (state.kind === "refused") return { verdict: { readiness: "unavailable", reason: state.reason } };
    const { name, identity: identity2, root } = here;
    const read = readRecord(records, name);
    if (!read.ok) {
      return refuse(
        name,
        `Worktree isolation refused: its record cannot be read: ${read.error}. pi-cgc does not overwrite it.`
      );
    }
    const owner = ownershipOf(read.record, identity2);
    if (owner.kind === "mismatch") {
      return refuse(
        name,
        `Worktree isolation refused: the CGC context ${name} is recorded for the ${describeIdentity(owner.record, owner.record.path)}, not for this ${describeIdentity(identity2, root)}. pi-cgc neither shares nor repairs it (record: ${records}/${name}.json). If that worktree is gone, remove the context (cgc context delete ${name}; cgc keeps its files) and pi-cgc drops the record at the next session; or set worktree.mode to off.`
      );
    }
    const listing = await listContexts(runner);
    if (!("list" in listing)) {
      const readiness = listing.code === "UNAVAILABLE" ? "unavailable" : "unknown";
      return { verdict: { readiness, reason: `cgc's named contexts could not be listed: ${listing.reason}` } };
    }
    if (listing.list.mode !== "global") {
      return refuse(
        name,
        `Worktree isolation refused: cgc is in ${listing.list.mode} mode, where \`cgc mcp start\` (which takes no --context) opens another database than ${name}. Switch back with \`cgc context mode global\`, or set worktree.mode to off.`
      );
    }
    const context = listing.list.contexts.find((entry) => entry.name === name);
    if (!context) {
      state = { kind: "pending", name };
      return { noGraph: `this worktree's CGC named context ${name} does not exist yet` };
    }
    if (owner.kind === "unrecorded") {
      return refuse(
        name,
        `Worktree isolation refused: cgc already has a context ${name} that pi-cgc has no record of creating for this ${describeIdentity(identity2, root)}, so it is not used. If nothing else needs it, remove it (cgc context delete ${name}; cgc keeps its files) and pi-cgc creates its own; or set worktree.mode to off.`
      );
    }
    if (!existsSync5(dirname4(context.dbPath))) {
      return refuse(
        name,
        `Worktree isolation refused: cgc lists the context ${name} at ${context.dbPath}, which does not exist (cgc drops [bracketed] text from the paths it prints), so cgc's MCP server cannot be pointed at it.`
      );
    }
    if (owner.record.path !== root) writeRecord(records, name, { ...owner.record, path: root });
    state = { kind: "active", name, database: context.database, dbPath: context.dbPath };
    return {};
  }
  function refuseServerBackend(backend) {
    const here = linked();
    if (!here || state.kind === "refused" || !backend || !isServerBackend(backend.name)) return void 0;
    return refuse(
      here.name,
      `Worktree isolation refused: cgc's backend is ${backend.name} (from ${backend.source}), a server whose one graph every CGC context shares, so ${here.name} would not keep this worktree apart. Use an embedded backend, or set worktree.mode to off.`
    ).verdict;
  }
  async function createContext(runner, backend) {
    const here = linked();
    if (!here || state.kind !== "pending") return void 0;
    const { name, identity: identity2, root } = here;
    const claimed = writeRecord(records, name, { ...identity2, path: root, createdAt: (/* @__PURE__ */ new Date()).toISOString() }, true);
    if (!claimed.ok) {
      state = { kind: "checking", name };
      return notRun([runner.executable, "context", "create", name], "FAILED", claimed.error);
    }
    const database = backend && !isServerBackend(backend.name) ? ["--database", backend.name] : [];
    const args = ["context", "create", name, ...database];
    const result = await runner.run(args, { kind: "maintenance", cwd: root, takesLock: false });
    listed = void 0;
    if (result.code !== "OK") return result;
    const created = parseContextCreate(result.stdout, name);
    if (created.kind !== "ok") return { ...result, code: "FAILED", reason: created.reason };
    const settled = await resolve6(runner);
    if (state.kind !== "active")
      return notRun(
        [runner.executable, ...args],
        "FAILED",
        settled.verdict?.reason ?? `the context ${name} is not usable`
      );
    return void 0;
  }
  function fromMain() {
    const here = linked();
    if (!here || state.kind !== "pending") return void 0;
    const mainRoot = mainCheckoutOf(here.identity);
    if (!mainRoot) return { why: "the repository has no main checkout" };
    return currentMainGraph(options.env, mainRoot);
  }
  function contextDeleted(name) {
    removeRecord(records, name);
    listed = void 0;
    if (!("name" in state) || state.name !== name) return false;
    state = { kind: "checking", name };
    return true;
  }
  function describe() {
    const found = worktree();
    const orphans = isolating ? orphanNames() : [];
    const gone = orphans.length > 0 ? `; worktree gone, context kept: ${orphans.join(", ")}` : "";
    switch (state.kind) {
      case "shared":
        if (!isolating)
          return found.kind === "linked" ? `linked worktree "${found.identity.worktreeId}" \u2014 shares the default graph (worktree.mode off)` : void 0;
        return `${state.why} \u2014 default graph${gone}`;
      case "checking":
        return `linked worktree \u2014 context ${state.name}, not checked yet${gone}`;
      case "pending":
        return `linked worktree \u2014 context ${state.name} does not exist yet (/cgc index creates it)${gone}`;
      case "active":
        return `linked worktree \u2014 context ${state.name} (${state.database}, ${state.dbPath})${gone}`;
      case "refused":
        return `linked worktree \u2014 context ${state.name} refused: ${state.reason}${gone}`;
    }
  }
  function orphanNames() {
    return orphanedContexts(readRecords(records)).map(([name]) => name);
  }
  return {
    get state() {
      return state;
    },
    /** The git toplevel of the session's folder (the worktree's root), when there is one. */
    get root() {
      const found = worktree();
      return found.kind === "not-git" ? void 0 : found.root;
    },
    resolve: resolve6,
    refuseServerBackend,
    createContext,
    fromMain,
    contextDeleted,
    describe,
    /** Runner: arguments for every database-backed subcommand. */
    subcommandArgs() {
      const name = linked()?.name;
      return name ? ["--context", name] : [];
    },
    /** Runner: `mcp start` takes no --context, so it gets the context's database by path. */
    serverEnv() {
      return state.kind === "active" ? { CGC_RUNTIME_DB_TYPE: state.database, CGC_RUNTIME_DB_PATH: state.dbPath } : {};
    },
    /** Runner: why no database-backed call may run now (a linked worktree whose context is not usable). */
    databaseRefusal() {
      if (!linked()) return void 0;
      switch (state.kind) {
        case "active":
        case "shared":
          return void 0;
        case "refused":
          return state.reason;
        case "pending":
          return `this worktree's CGC named context ${state.name} does not exist yet`;
        case "checking":
          return `this worktree's CGC named context ${state.name} has not been checked yet`;
      }
    },
    /** The watcher's gate: a linked worktree is watched only in its own, usable context. */
    allowsWatcher() {
      return !linked() || state.kind === "active";
    }
  };
}

// src/lifecycle/session.ts
function createCgcSession(ctx, options = {}) {
  const env = options.env ?? process.env;
  const cwd = ctx.cwd;
  let loaded = loadConfig({ cwd, env });
  const config = () => loaded.values;
  const facts = { root: cwd, backend: void 0, cgcVersion: void 0, repositories: [] };
  const store = createStore();
  const tracker = createChangeTracker(env);
  const spill = createSpillDir(cwd);
  let disposed = false;
  let ledger = graphLedger(env, facts.root);
  const currentLedger = () => {
    if (ledger.root !== facts.root) ledger = graphLedger(env, facts.root);
    return ledger;
  };
  const provenance = createGraphProvenance(currentLedger);
  const ui = (use) => {
    if (disposed) return;
    try {
      use();
    } catch {
    }
  };
  const hasUI = ctx.hasUI;
  const notices = createNoticeLedger({
    hasUI,
    notify: (message, level) => ui(() => ctx.ui.notify(message, level)),
    stderr: (line) => writeSync(2, `${line}
`)
    // synchronous: print mode may exit before a piped write drains
  });
  for (const [index, warning] of loaded.warnings.entries())
    notices.once("config-warning", warning, "warning", String(index));
  const worktree = createWorktreeScope({ cwd, env, mode: config()["worktree.mode"], notices });
  const runner = createRunner({
    executable: config()["cgc.executable"],
    env,
    // Worktree isolation decides, at each spawn, the context every database-backed call carries.
    subcommandArgs: () => worktree.subcommandArgs(),
    serverEnv: () => worktree.serverEnv(),
    databaseRefusal: () => worktree.databaseRefusal(),
    // FalkorDB Lite, or not known yet: pi-cgc's processes of the HOME take turns at its daemon (src/cgc/lite-gate.ts).
    sharedDaemon: () => {
      const name = store.get().facts?.reportedBackend?.name ?? facts.backend?.name;
      return name === void 0 || name === "falkordb";
    },
    // Read at each spawn, so a budget changed in the settings applies to the next run.
    budgets: {
      get probe() {
        return config()["timeouts.probeMs"];
      },
      get query() {
        return config()["timeouts.queryMs"];
      },
      get maintenance() {
        return config()["timeouts.maintenanceMs"];
      },
      get longLived() {
        return config()["timeouts.longLivedMs"];
      }
    }
  });
  const parts = {
    env,
    runner,
    store,
    tracker,
    notices,
    worktree,
    config,
    ledger: currentLedger,
    disposed: () => disposed
  };
  const maintenance = createMaintenance({
    ...parts,
    root: () => facts.root,
    backend: () => facts.backend,
    cgcVersion: () => facts.cgcVersion,
    refresh: () => readiness.refresh()
  });
  const readiness = createReadiness({ ...parts, cwd, provenance, maintenance, facts });
  return {
    env,
    store,
    tracker,
    runner,
    notices,
    spill,
    config,
    get loaded() {
      return loaded;
    },
    get root() {
      return facts.root;
    },
    get backend() {
      return facts.backend;
    },
    get repositories() {
      return facts.repositories;
    },
    get ledger() {
      return currentLedger();
    },
    worktree,
    hasUI,
    withUi: ui,
    get disposed() {
      return disposed;
    },
    provenance,
    refresh: readiness.refresh,
    runMaintenance: maintenance.run,
    fullIndexThrough: maintenance.fullIndexThrough,
    stoppedByBudget: maintenance.stoppedByBudget,
    get maintenanceRunning() {
      return maintenance.running;
    },
    onProbe: readiness.onProbe,
    reloadConfig() {
      loaded = loadConfig({ cwd, env });
    },
    present(raw) {
      return applyOutputPolicy(
        raw,
        { maxBytes: config()["output.maxBytes"], maxLines: config()["output.maxLines"] },
        spill
      );
    },
    async dispose() {
      disposed = true;
      await runner.close();
      spill.cleanup();
    }
  };
}

// src/ui/command.ts
import { writeSync as writeSync2 } from "node:fs";
var VERBS = {
  status: "What pi-cgc knows: workspace, backend, readiness, index facts, freshness (spawns nothing, except to re-check a busy or unknown verdict)",
  index: "Build the code graph for this workspace (asks first); --force rebuilds it from scratch",
  sync: "Bring the graph up to date with the files changed since it was last verified",
  doctor: "Run cgc doctor and show its report",
  report: "Write CGC_REPORT.md into the workspace (asks first)",
  config: "Settings: every key, its value and its source; save to project or global"
};
function usage() {
  return ["Usage: /cgc <verb>", ...Object.entries(VERBS).map(([verb, doc]) => `  ${verb.padEnd(8)} ${doc}`)].join("\n");
}
function registerCgcCommand(pi, current, hooks) {
  let verbs;
  pi.registerCommand("cgc", {
    description: "CodeGraphContext: status, index, sync, doctor, report, config",
    getArgumentCompletions: (prefix) => {
      const items = Object.entries(VERBS).filter(([verb]) => verb.startsWith(prefix.trim())).map(([verb, description]) => ({ value: verb, label: verb, description }));
      if (prefix.trim().startsWith("index"))
        items.push({ value: "index --force", label: "index --force", description: VERBS.index });
      return items.length > 0 ? items : null;
    },
    handler: async (args, ctx) => {
      const session = current();
      if (!session) {
        ctx.ui.notify("pi-cgc is not active in this session.", "warning");
        return;
      }
      const [verb = "status", ...rest] = args.trim().split(/\s+/).filter(Boolean);
      const show = (text, level = "info") => {
        const shown = hooks().annotate(text);
        if (ctx.hasUI) ctx.ui.notify(shown, level);
        else writeSync2(1, `${shown}
`);
      };
      if (!Object.hasOwn(VERBS, verb)) return show(`Unknown verb "${verb}".
${usage()}`, "warning");
      verbs ??= import("./chunks/verbs-NH6EYK2P.js");
      return (await verbs).runVerb(verb, rest, { session, ctx, show, hooks: hooks() });
    }
  });
}

// src/index.ts
function piCgc(pi) {
  let session;
  let unmountChip;
  let firstProbe;
  const current = () => session;
  pi.on("session_start", (_event, ctx) => {
    const started = createCgcSession(ctx);
    session = started;
    if (started.hasUI)
      unmountChip = mountChip(started.store, (text) => started.withUi(() => ctx.ui.setStatus(CHIP_KEY, text)));
    firstProbe = trackFirstProbe(started);
  });
  pi.on("input", async () => {
    if (session && firstProbe && !firstProbe.settled) await firstProbe.wait(session.config()["timeouts.probeMs"]);
  });
  pi.on("session_shutdown", async () => {
    const ending = session;
    session = void 0;
    firstProbe = void 0;
    unmountChip?.();
    unmountChip = void 0;
    await ending?.dispose();
  });
  const freshness = installFreshness(pi, current);
  let notes;
  const surface = installAgentSurface(
    pi,
    current,
    { settle: freshness.settle, possibleCallers: freshness.possibleCallers },
    () => notes?.edited() ?? /* @__PURE__ */ new Set()
  );
  notes = installImpactNotes(pi, current, surface.deps);
  installInjection(pi, current);
  registerCgcCommand(pi, current, () => ({
    sync: (ctx) => freshness.manualSync(ctx),
    engine: () => freshness.describeEngine(),
    written: (paths) => freshness.written(paths),
    annotate: (text) => annotate(session, text)
  }));
}
export {
  piCgc as default
};
