import {
  ENGINE_WRITTEN_ELSEWHERE,
  graphLedger
} from "./chunk-F77Q226V.js";
import {
  cgcConfigDir,
  cgcDotEnvPath,
  readCgcDotEnv
} from "./chunk-K7T5KA4E.js";

// src/cgc/interpreter.ts
import { accessSync, closeSync, constants, existsSync, openSync, readdirSync, readFileSync, readSync } from "node:fs";
import { basename, delimiter, dirname, isAbsolute, join } from "node:path";
function cgcInterpreter(executable, env) {
  const path = locate(executable, env);
  if (!path) return { ok: false, reason: `${executable} is not on PATH` };
  let head;
  try {
    const fd = openSync(path, "r");
    const buffer = Buffer.alloc(1024);
    const read = readSync(fd, buffer, 0, buffer.length, 0);
    closeSync(fd);
    head = buffer.subarray(0, read).toString("utf8");
  } catch (error) {
    return { ok: false, reason: `cannot read ${path}: ${error.message}` };
  }
  const [first = "", second = ""] = head.split("\n");
  const shebang = /^#!\s*(\S+)/.exec(first)?.[1];
  const python = shebang?.endsWith("/sh") ? /^'''exec' "?([^"\s]+)"?/.exec(second)?.[1] : shebang;
  if (!python || !/python[\d.]*$/.test(python)) {
    return {
      ok: false,
      reason: `${path} is not a Python launcher (its first line is ${JSON.stringify(first.slice(0, 80))})`
    };
  }
  return executableFile(python) ? { ok: true, python } : { ok: false, reason: `cgc's Python ${python} cannot be run` };
}
function locate(executable, env) {
  if (executable.includes("/")) return executableFile(executable) ? executable : void 0;
  for (const dir of (env.PATH ?? "").split(delimiter)) {
    if (!dir || !isAbsolute(dir)) continue;
    const candidate = join(dir, executable);
    if (executableFile(candidate)) return candidate;
  }
  return void 0;
}
function executableFile(path) {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}
function installedCgcVersion(executable, env) {
  const interpreter = cgcInterpreter(executable, env);
  if (!interpreter.ok) return void 0;
  const bin = dirname(interpreter.python);
  const venv = dirname(bin);
  if (basename(bin) !== "bin" || !existsSync(join(venv, "pyvenv.cfg"))) return void 0;
  const versions = /* @__PURE__ */ new Set();
  for (const lib of ["lib", "lib64"]) {
    for (const python of entries(join(venv, lib)).filter((name) => /^python3\.\d+$/.test(name))) {
      const sitePackages = join(venv, lib, python, "site-packages");
      for (const name of entries(sitePackages).filter((entry) => DIST_INFO.test(entry))) {
        const version = metadataVersion(join(sitePackages, name, "METADATA"));
        if (version === void 0) return void 0;
        versions.add(version);
      }
    }
  }
  return versions.size === 1 ? [...versions][0] : void 0;
}
var DIST_INFO = /^codegraphcontext-[^-]+\.dist-info$/i;
function entries(dir) {
  try {
    return readdirSync(dir);
  } catch {
    return [];
  }
}
function metadataVersion(path) {
  try {
    return /^Version:[ \t]*(\S+)[ \t]*$/m.exec(readFileSync(path, "utf8"))?.[1];
  } catch {
    return void 0;
  }
}

// src/cgc/lite-gate.ts
import { createHash } from "node:crypto";
import { existsSync as existsSync2, readFileSync as readFileSync2, readlinkSync, unlinkSync } from "node:fs";
import { connect, createServer } from "node:net";
import { homedir, tmpdir } from "node:os";
import { dirname as dirname2, join as join2 } from "node:path";
var RETRY_MS = 150;
function gateKey(home) {
  return createHash("sha256").update(home).digest("hex").slice(0, 32);
}
function listen(address) {
  return new Promise((resolve) => {
    const server = createServer((socket) => socket.destroy());
    server.once("error", (error) => resolve(error));
    server.listen(address, () => {
      server.removeAllListeners("error");
      server.on("error", () => {
      });
      server.unref();
      resolve(server);
    });
  });
}
function probeSocket(path, timeoutMs, send) {
  if (!existsSync2(path)) return Promise.resolve("none");
  return new Promise((resolve) => {
    const socket = connect(path);
    let connected = false;
    const done = (outcome) => {
      clearTimeout(timer);
      socket.destroy();
      resolve(outcome);
    };
    const timer = setTimeout(() => done(connected ? "silent" : "none"), timeoutMs);
    socket.once("connect", () => {
      connected = true;
      if (send === void 0) done("answers");
      else socket.write(send);
    });
    socket.once("data", () => done("answers"));
    socket.once("error", () => done("none"));
  });
}
async function socketAnswers(path, timeoutMs = 1e3) {
  return await probeSocket(path, timeoutMs) === "answers";
}
var abstractWorks;
async function tryTake(home) {
  const key = gateKey(home);
  if (abstractWorks !== false && process.platform === "linux") {
    const got2 = await listen(`\0pi-cgc-falkordb-lite-${key}`);
    if (!(got2 instanceof Error)) {
      abstractWorks = true;
      return { release: () => got2.close() };
    }
    if (got2.code === "EADDRINUSE") return void 0;
    abstractWorks = false;
  }
  const path = join2(tmpdir(), `pi-cgc-falkordb-lite-${key}.sock`);
  const got = await listen(path);
  if (!(got instanceof Error)) return { release: () => got.close() };
  if (got.code !== "EADDRINUSE") throw got;
  if (!await socketAnswers(path)) {
    try {
      unlinkSync(path);
    } catch {
    }
  }
  return void 0;
}
async function acquireLiteGate(home, timeoutMs, signal, givenUp = () => false) {
  const deadline = Date.now() + timeoutMs;
  for (; ; ) {
    if (signal?.aborted || givenUp()) return "CANCELLED";
    let hold;
    try {
      hold = await tryTake(home);
    } catch {
      return { release: () => {
      } };
    }
    if (hold) {
      if (!signal?.aborted && !givenUp()) return hold;
      hold.release();
      return "CANCELLED";
    }
    if (Date.now() >= deadline) return "TIMEOUT";
    await new Promise((resolve) => setTimeout(resolve, Math.min(RETRY_MS, Math.max(deadline - Date.now(), 1))).unref());
  }
}
function liteHome(env) {
  return env.HOME || homedir();
}
function liteSocketPath(env, argv) {
  if (env.FALKORDB_SOCKET_PATH) return env.FALKORDB_SOCKET_PATH;
  if (env.CGC_RUNTIME_DB_PATH) return join2(dirname2(env.CGC_RUNTIME_DB_PATH), "falkordb.sock");
  const cgcDir = cgcConfigDir(env);
  const at = argv.indexOf("--context");
  const context = at >= 0 ? argv[at + 1] : void 0;
  return context ? join2(cgcDir, "contexts", context, "db", "falkordb.sock") : join2(cgcDir, "global", "db", "falkordb.sock");
}
async function liteServerSilence(socket, timeoutMs = 3e3) {
  const silent = await probeSocket(socket, timeoutMs, "*1\r\n$4\r\nPING\r\n") === "silent";
  if (!silent) return void 0;
  const pid = liteServerPid(dirname2(socket));
  const end = pid === void 0 ? "ending its redis-server" : `ending it (kill -9 ${pid})`;
  return `FalkorDB Lite's server${pid === void 0 ? "" : ` (redis-server, pid ${pid})`} accepts connections on ${socket} but did not answer a PING within ${timeoutMs / 1e3} s: it may be stuck (FalkorDB can hang for good while loading a saved graph, and every cgc of this HOME then waits on it); if it stays silent, ${end} lets the next cgc start a new one (it loses only what the stuck server held unsaved)`;
}
function liteServerPid(dbDir) {
  try {
    const settings = JSON.parse(readFileSync2(join2(dbDir, "falkordb.settings"), "utf8"));
    if (typeof settings.pidfile !== "string") return void 0;
    const pid = Number.parseInt(readFileSync2(settings.pidfile, "utf8").trim(), 10);
    return Number.isInteger(pid) && pid > 0 ? pid : void 0;
  } catch {
    return void 0;
  }
}
function userFalkorNetwork(env) {
  for (const variable of ["FALKORDB_PORT", "FALKORDB_HOST"]) {
    const value = env[variable];
    if (value) return { variable, value, where: "the environment" };
  }
  const dotEnv = readCgcDotEnv(env);
  for (const variable of ["FALKORDB_PORT", "FALKORDB_HOST"]) {
    const value = dotEnv[variable];
    if (value) return { variable, value, where: cgcDotEnvPath(env) };
  }
  return void 0;
}
function liteSocketOnlyEnv(env) {
  return userFalkorNetwork(env) ? {} : { FALKORDB_PORT: "0" };
}
function liteDaemonPort(socket) {
  const pid = liteServerPid(dirname2(socket));
  if (pid === void 0) return void 0;
  let title;
  try {
    title = readFileSync2(`/proc/${pid}/cmdline`, "utf8").split("\0").join(" ");
  } catch {
    return void 0;
  }
  const port = /redis-server\s+\S*:(\d+)/.exec(title);
  if (!port?.[1] || title.includes("unixsocket:")) return void 0;
  const number = Number.parseInt(port[1], 10);
  return number > 0 ? { pid, port: number } : void 0;
}
function describeLiteNetwork(env) {
  const chosen = userFalkorNetwork(env);
  if (chosen && !(chosen.variable === "FALKORDB_PORT" && chosen.value === "0")) {
    return chosen.variable === "FALKORDB_PORT" ? `FALKORDB_PORT=${chosen.value} is set in ${chosen.where}: pi-cgc leaves it, so a FalkorDB Lite daemon its cgc starts listens on TCP port ${chosen.value} on every interface, with no password (unset it to keep the daemon on its socket only)` : `FALKORDB_HOST=${chosen.value} is set in ${chosen.where}: pi-cgc leaves FalkorDB's port as cgc chooses it`;
  }
  const listening = liteDaemonPort(liteSocketPath(env, []));
  return listening ? `the FalkorDB Lite daemon (redis-server, pid ${listening.pid}) listens on TCP port ${listening.port} on every interface, with no password: pi-cgc did not start it, so it is your cgc's; end it, and start cgc with FALKORDB_PORT=0, to keep it on its socket (docs/cgc-compat.md)` : void 0;
}
function liteDaemonOf(socket) {
  const dbDir = dirname2(socket);
  const pid = liteServerPid(dbDir);
  if (pid === void 0) return void 0;
  try {
    const title = readFileSync2(`/proc/${pid}/cmdline`, "utf8").split("\0").join(" ");
    if (!/redis-server/.test(title)) return void 0;
    return title.includes(socket) || readlinkSync(`/proc/${pid}/cwd`) === dbDir ? pid : void 0;
  } catch {
    return void 0;
  }
}

// src/workspace/main-graph.ts
import { execFile } from "node:child_process";
import { createHash as createHash2 } from "node:crypto";
import { existsSync as existsSync3 } from "node:fs";
import { basename as basename2, dirname as dirname3, join as join3 } from "node:path";
function mainCheckoutOf(identity) {
  if (basename2(identity.commonDir) !== ".git") return void 0;
  const root = dirname3(identity.commonDir);
  return existsSync3(root) ? root : void 0;
}
function currentMainGraph(env, mainRoot) {
  const ledger = graphLedger(env, mainRoot);
  if (ledger.runNote()) return { why: "an index or sync of the main checkout's graph did not finish" };
  const cache = join3(ledger.engineCacheDir, `${createHash2("sha1").update(mainRoot).digest("hex")}.pickle`);
  if (!existsSync3(cache)) return { why: "the main checkout's graph has no engine cache" };
  for (const [marker, meaning] of [
    [cache.replace(/\.pickle$/, ".untrusted"), "may not be what its graph holds"],
    [cache.replace(/\.pickle$/, ".dirty"), "has an update of unknown outcome"],
    [join3(ledger.engineCacheDir, ENGINE_WRITTEN_ELSEWHERE), "was written by something else"]
  ]) {
    if (existsSync3(marker)) return { why: `the main checkout's graph ${meaning}` };
  }
  return { root: mainRoot, cacheDir: ledger.engineCacheDir };
}
async function differingFiles(mainRoot, root, budgetMs = 5e3) {
  const git = (cwd, args) => new Promise((settle) => {
    execFile(
      "git",
      args,
      { cwd, timeout: budgetMs, maxBuffer: 16 << 20 },
      (error, stdout) => settle(error ? void 0 : stdout)
    );
  });
  const [mainHead, committed, mainStatus, status] = await Promise.all([
    git(mainRoot, ["rev-parse", "HEAD"]),
    git(root, ["rev-parse", "HEAD"]),
    git(mainRoot, ["status", "--porcelain", "-z", "--untracked-files=all"]),
    git(root, ["status", "--porcelain", "-z", "--untracked-files=all"])
  ]);
  if (!mainHead || !committed || mainStatus === void 0 || status === void 0) return void 0;
  const diff = await git(root, ["diff", "--name-only", "-z", mainHead.trim(), committed.trim()]);
  if (diff === void 0) return void 0;
  const paths = new Set(diff.split("\0").filter(Boolean));
  for (const listing of [mainStatus, status])
    for (const entry of listing.split("\0")) if (entry.length > 3) paths.add(entry.slice(3));
  return paths.size;
}

// src/state/elapsed.ts
function formatElapsed(ms) {
  const seconds = Math.max(0, Math.round(ms / 1e3));
  return seconds < 60 ? `${seconds}s` : `${Math.floor(seconds / 60)}m${String(seconds % 60).padStart(2, "0")}s`;
}

// src/ui/chip.ts
var CHIP_KEY = "cgc";
function chipText(state, now = Date.now()) {
  if (state.activity !== "idle") {
    const elapsed = state.activityStartedAt ? ` ${formatElapsed(now - state.activityStartedAt)}` : "";
    const of = state.estimate ? ` of ~${formatElapsed(state.estimate.ms)} \xB7 ${state.estimate.files} files` : "";
    const label = state.activity === "rebuilding" ? "rebuilding\u2026" : `${state.activity}\u2026`;
    const progress = state.progress ? ` \xB7 ${state.progress}` : "";
    return `cgc ${label}${elapsed}${of}${progress}`;
  }
  if (!state.probed) return "cgc checking\u2026";
  if (state.readiness !== "ready") return `cgc ${state.readiness}`;
  return `cgc ready${freshnessSuffix(state)}`;
}
function mountChip(store, setStatus) {
  let ticker;
  let stopped = false;
  let shown;
  const render = (state) => {
    if (stopped) return;
    const text = chipText(state);
    if (text !== shown) setStatus(text);
    shown = text;
    if (state.activity !== "idle" && !ticker) {
      ticker = setInterval(() => render(store.get()), 1e3);
      ticker.unref();
    } else if (state.activity === "idle" && ticker) {
      clearInterval(ticker);
      ticker = void 0;
    }
  };
  const unsubscribe = store.subscribe((state) => render(state));
  render(store.get());
  return () => {
    stopped = true;
    unsubscribe();
    if (ticker) clearInterval(ticker);
  };
}
function freshnessSuffix(state) {
  switch (state.freshness) {
    case "fresh":
      return state.keptByWatcher ? " \xB7 watched" : " \xB7 fresh";
    case "possibly-stale":
      return " \xB7 possibly stale";
    case "unknown":
      return "";
  }
}

// src/cgc/engine-script.ts
import { existsSync as existsSync4, readFileSync as readFileSync3 } from "node:fs";
import { dirname as dirname4, join as join4 } from "node:path";
import { fileURLToPath } from "node:url";
function engineFile(name) {
  const here = dirname4(fileURLToPath(import.meta.url));
  for (let dir = here; ; dir = dirname4(dir)) {
    if (existsSync4(join4(dir, "engine", name))) return join4(dir, "engine", name);
    if (dirname4(dir) === dir) return join4(here, "engine", name);
  }
}
var ENGINE_SCRIPT = engineFile("pi-cgc-engine.py");
var PROVEN_CGC_VERSIONS = provenVersions(
  engineFile("pi_cgc_engine/proven-cgc-versions.json")
);
function provenVersions(path) {
  try {
    const { versions } = JSON.parse(readFileSync3(path, "utf8"));
    return Array.isArray(versions) ? versions.filter((v) => typeof v === "string") : [];
  } catch {
    return [];
  }
}
function parseStoreArgs(store) {
  return store ? ["--parse-store", store.dir, "--parse-store-mb", String(store.mb)] : [];
}
function engineScriptPresent() {
  return existsSync4(ENGINE_SCRIPT);
}
function wholeIndexProgram(facts) {
  if (!facts.engineOn) return void 0;
  if (!facts.cgcVersion || !PROVEN_CGC_VERSIONS.includes(facts.cgcVersion) || !engineScriptPresent()) return void 0;
  const interpreter = cgcInterpreter(facts.executable, facts.env);
  if (!interpreter.ok) return void 0;
  return {
    path: interpreter.python,
    name: "pi-cgc's index (the engine script)",
    leading: [ENGINE_SCRIPT, "--cache-dir", facts.cacheDir, ...parseStoreArgs(facts.parseStore)]
  };
}

export {
  formatElapsed,
  cgcInterpreter,
  installedCgcVersion,
  engineFile,
  ENGINE_SCRIPT,
  PROVEN_CGC_VERSIONS,
  parseStoreArgs,
  engineScriptPresent,
  wholeIndexProgram,
  socketAnswers,
  acquireLiteGate,
  liteHome,
  liteSocketPath,
  liteServerSilence,
  liteSocketOnlyEnv,
  describeLiteNetwork,
  liteDaemonOf,
  mainCheckoutOf,
  currentMainGraph,
  differingFiles,
  CHIP_KEY,
  chipText,
  mountChip
};
