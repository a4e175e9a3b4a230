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
import { existsSync as existsSync2 } from "node:fs";
import { dirname as dirname2, join as join2 } from "node:path";
import { fileURLToPath } from "node:url";
function engineFile(name) {
  const here = dirname2(fileURLToPath(import.meta.url));
  for (let dir = here; ; dir = dirname2(dir)) {
    if (existsSync2(join2(dir, "engine", name))) return join2(dir, "engine", name);
    if (dirname2(dir) === dir) return join2(here, "engine", name);
  }
}
var ENGINE_SCRIPT = engineFile("pi-cgc-engine.py");
var PROVEN_CGC_VERSIONS = ["0.6.13"];
function engineScriptPresent() {
  return existsSync2(ENGINE_SCRIPT);
}
function wholeIndexProgram(facts) {
  if (!facts.engineOn) return void 0;
  if (!facts.cgcVersion || !PROVEN_CGC_VERSIONS.includes(facts.cgcVersion) || !engineScriptPresent()) return void 0;
  const interpreter = cgcInterpreter(facts.executable, facts.env);
  if (!interpreter.ok) return void 0;
  return {
    path: interpreter.python,
    name: "pi-cgc's index (the engine script)",
    leading: [ENGINE_SCRIPT, "--cache-dir", facts.cacheDir]
  };
}

export {
  formatElapsed,
  cgcInterpreter,
  installedCgcVersion,
  engineFile,
  ENGINE_SCRIPT,
  PROVEN_CGC_VERSIONS,
  engineScriptPresent,
  wholeIndexProgram,
  CHIP_KEY,
  chipText,
  mountChip
};
