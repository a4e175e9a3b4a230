// The process-wide registry of live cgc children, so that none outlives pi however it ends.
// pi re-evaluates extension modules on every reload, so the registry lives on globalThis and the
// exit and signal hooks are installed once per process.
//
// Exit and signal hooks cannot run when pi is SIGKILLed (or crashes hard), and a cgc child sits in its
// own process group, so nothing would reach it: a quiet `cgc watch` or a long Kùzu write then lives on
// until it next prints. A guardian covers that: a tiny `sh` started with the first child, in its own
// group, that is told every group as it comes and goes through a pipe only pi holds. When pi ends, in
// any way, the pipe reaches end-of-file and the guardian stops the groups still listed: SIGINT so cgc's
// cleanup runs, SIGTERM after the grace period, SIGKILL after another.
import { type ChildProcess, spawn } from "node:child_process";

interface Registry {
  groups: Map<number, number>; // process-group id → kill grace in ms
  hooksInstalled: boolean;
  spawnsTotal: number;
  /** The guardian; null when it could not be started (then the exit and signal hooks are all there is). */
  guardian?: ChildProcess | null;
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
  tellGuardian(reg, `+${child.pid} ${Math.ceil(graceMs / 1000)}`);
}

export function unregisterChild(child: ChildProcess): void {
  if (child.pid === undefined) return;
  const reg = registry();
  if (reg.groups.delete(child.pid) && reg.guardian) tellGuardian(reg, `-${child.pid}`);
}

/** The guardian's process id, once a child has been registered (tests read it). */
export function guardianPid(): number | undefined {
  return registry().guardian?.pid;
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
 * pi is going away and cannot wait: the guardian stops the remaining groups (SIGINT so cgc's cleanup
 * runs, then SIGTERM and SIGKILL after the grace periods). Without a guardian, a small detached reaper
 * does the same.
 */
function reapAll(reg: Registry): void {
  if (reg.groups.size === 0) return;
  const pids = [...reg.groups.keys()];
  if (reg.guardian && tellGuardian(reg, "!")) {
    reg.groups.clear();
    return;
  }
  const grace = Math.max(...reg.groups.values());
  reg.groups.clear();
  for (const pid of pids) signalGroup(pid, "SIGINT");
  const reaper = spawn(process.execPath, ["-e", REAPER_SOURCE, String(grace), ...pids.map(String)], {
    detached: true,
    stdio: "ignore",
  });
  reaper.unref();
}

/**
 * Sends `signal` to the whole process group `pid` leads (every cgc child leads its own). A group that is
 * already gone, or no pid at all, is what a stop wanted: never an error. The one copy of this for src/ and
 * test/; the reaper and the guardian below do the same in their own processes.
 */
export function signalGroup(pid: number | undefined, signal: NodeJS.Signals): void {
  if (pid === undefined) return;
  try {
    process.kill(-pid, signal);
  } catch {
    // ESRCH: already gone (EPERM: the id now names another user's group, which is not ours to stop).
  }
}

const REAPER_SOURCE = `
const [grace, ...pids] = process.argv.slice(1).map(Number);
const send = (s) => pids.forEach((p) => { try { process.kill(-p, s); } catch {} });
const alive = () => pids.some((p) => { try { process.kill(-p, 0); return true; } catch { return false; } });
setTimeout(() => { if (!alive()) return; send("SIGTERM"); setTimeout(() => send("SIGKILL"), grace); }, grace);
`;

/**
 * Reads `+<pgid> <grace s>` and `-<pgid>` lines; `!` stops the listed groups now (pi's exit and signal
 * hooks); end-of-file (pi is gone, however it ended) stops them too and ends the guardian. Each stop runs
 * in the background and is SIGINT, then SIGTERM and SIGKILL to the groups still alive after the grace.
 */
const GUARDIAN_SCRIPT = `
g=' '; s=1
stop() {
  [ "$1" = ' ' ] && return
  for p in $1; do kill -INT -$p 2>/dev/null; done
  sleep $2
  for p in $1; do kill -TERM -$p 2>/dev/null; done
  sleep $2
  for p in $1; do kill -KILL -$p 2>/dev/null; done
}
while IFS= read -r l; do
  case $l in
    +*) set -- \${l#+}; g="$g$1 "; [ "$2" -gt "$s" ] && s=$2 ;;
    -*) p=\${l#-}; case $g in *" $p "*) g="\${g%%" $p "*} \${g#*" $p "}" ;; esac ;;
    !) stop "$g" "$s" & g=' ' ;;
  esac
done
stop "$g" "$s"
`;

/** Sends one line to the guardian, starting it first if needed. False when there is no guardian. */
function tellGuardian(reg: Registry, line: string): boolean {
  if (reg.guardian === undefined) reg.guardian = startGuardian(reg);
  const stdin = reg.guardian?.stdin;
  if (!stdin || stdin.destroyed) return false;
  stdin.write(`${line}\n`);
  return true;
}

function startGuardian(reg: Registry): ChildProcess | null {
  let guardian: ChildProcess;
  try {
    // Its own group, so that a signal to pi's group (Ctrl-C, a closing terminal) does not end it early.
    guardian = spawn("/bin/sh", ["-c", GUARDIAN_SCRIPT, "pi-child-guardian"], {
      detached: true,
      stdio: ["pipe", "ignore", "ignore"],
    });
  } catch {
    return null;
  }
  const lost = () => {
    if (reg.guardian !== guardian) return;
    // A guardian that went away (killed by someone) is replaced on the next registration.
    reg.guardian = undefined;
  };
  guardian.once("error", () => {
    lost();
    reg.guardian = null;
  });
  guardian.once("exit", lost);
  guardian.stdin?.on("error", lost); // EPIPE once it is gone: never an uncaught error inside pi
  guardian.unref();
  (guardian.stdin as unknown as { unref?: () => void } | null)?.unref?.();
  // Groups registered before a replacement guardian started are handed to it.
  for (const [pid, grace] of reg.groups) guardian.stdin?.write(`+${pid} ${Math.ceil(grace / 1000)}\n`);
  return guardian;
}
