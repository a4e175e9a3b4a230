// The process-wide registry of live cgc children, so that none outlives pi however it ends.
// pi re-evaluates extension modules on every reload, so the registry lives on globalThis and the
// exit and signal hooks are installed once per process.
import { type ChildProcess, spawn } from "node:child_process";

interface Registry {
  groups: Map<number, number>; // process-group id → kill grace in ms
  hooksInstalled: boolean;
  spawnsTotal: number;
}

const KEY = Symbol.for("pi-cgc.children");
const TEARDOWN_SIGNALS = ["SIGINT", "SIGTERM", "SIGHUP"] as const;

function registry(): Registry {
  const holder = globalThis as { [KEY]?: Registry };
  holder[KEY] ??= { groups: new Map(), hooksInstalled: false, spawnsTotal: 0 };
  return holder[KEY];
}

export function registerChild(child: ChildProcess, graceMs: number): void {
  const reg = registry();
  reg.spawnsTotal++;
  if (child.pid === undefined) return;
  reg.groups.set(child.pid, graceMs);
  installHooks(reg);
}

export function unregisterChild(child: ChildProcess): void {
  if (child.pid !== undefined) registry().groups.delete(child.pid);
}

/** Live cgc process groups in this process (tests and benchmarks read it). */
export function liveGroups(): number[] {
  return [...registry().groups.keys()];
}

/** Every cgc spawn in this process since it started, across sessions and reloads. */
export function totalSpawns(): number {
  return registry().spawnsTotal;
}

function installHooks(reg: Registry): void {
  if (reg.hooksInstalled) return;
  reg.hooksInstalled = true;
  process.on("exit", () => reapAll(reg));
  for (const signal of TEARDOWN_SIGNALS) {
    const onSignal = () => {
      reapAll(reg);
      // Alone on this signal, our listener would swallow its default action: restore it.
      if (process.listenerCount(signal) === 1) {
        process.removeListener(signal, onSignal);
        process.kill(process.pid, signal);
      }
    };
    process.on(signal, onSignal);
  }
}

/**
 * pi is going away and cannot wait: hand the remaining groups to a small detached reaper that sends
 * SIGINT (cgc's cleanup runs), then SIGTERM and SIGKILL after the grace periods.
 */
function reapAll(reg: Registry): void {
  if (reg.groups.size === 0) return;
  const grace = Math.max(...reg.groups.values());
  const pids = [...reg.groups.keys()];
  reg.groups.clear();
  for (const pid of pids) signalGroup(pid, "SIGINT");
  const reaper = spawn(process.execPath, ["-e", REAPER_SOURCE, String(grace), ...pids.map(String)], {
    detached: true,
    stdio: "ignore",
  });
  reaper.unref();
}

function signalGroup(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pid, signal);
  } catch {
    // ESRCH: already gone.
  }
}

const REAPER_SOURCE = `
const [grace, ...pids] = process.argv.slice(1).map(Number);
const send = (s) => pids.forEach((p) => { try { process.kill(-p, s); } catch {} });
const alive = () => pids.some((p) => { try { process.kill(-p, 0); return true; } catch { return false; } });
setTimeout(() => { if (!alive()) return; send("SIGTERM"); setTimeout(() => send("SIGKILL"), grace); }, grace);
`;
