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
//
// A FalkorDB Lite daemon a child started (src/cgc/runner.ts finds it) is that child's to stop, and cgc stops it
// only from the starter's exit handler, and only while the starter's worker still runs (cgc 0.6.13
// FalkorDBManager.shutdown). A stop signals the starter's whole group, worker included; the worker exits at
// once and leaves redis up while another client is connected (the engine's forked cache save holds a copy of
// its connection), so the starter's handler then found no worker and left redis running, reparented to init,
// after pi had ended. So the registry keeps each child's daemon: once the child has closed, a daemon
// still running is sent SIGTERM (redis saves, then exits), and the guardian does the same at pi's end.
import { type ChildProcess, spawn } from "node:child_process";
import { readFileSync } from "node:fs";

interface Registry {
  groups: Map<number, number>; // process-group id → kill grace in ms
  /** A child's process-group id → the pid of the FalkorDB Lite daemon it started. */
  daemons: Map<number, number>;
  /** Daemons being stopped after their child closed. */
  stopping: Set<Promise<void>>;
  hooksInstalled: boolean;
  spawnsTotal: number;
  /** The guardian; null when it could not be started (then the exit and signal hooks are all there is). */
  guardian?: ChildProcess | null;
}

const KEY = Symbol.for("pi-cgc.children");
const TEARDOWN_SIGNALS = ["SIGINT", "SIGTERM", "SIGHUP"] as const;

function registry(): Registry {
  const holder = globalThis as { [KEY]?: Registry };
  holder[KEY] ??= { groups: new Map(), daemons: new Map(), stopping: new Set(), hooksInstalled: false, spawnsTotal: 0 };
  // A registry made by an earlier version of this module (pi reloads extensions in place) lacks the daemons.
  holder[KEY].daemons ??= new Map();
  holder[KEY].stopping ??= new Set();
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
  const daemon = reg.daemons.get(child.pid);
  if (daemon === undefined) return;
  reg.daemons.delete(child.pid);
  const stop = stopDaemon(reg, daemon);
  reg.stopping.add(stop);
  void stop.finally(() => reg.stopping.delete(stop));
}

/**
 * `daemon` (a FalkorDB Lite redis-server) was started by the live child `child`: it is stopped once the child
 * has closed, if it still runs then, and by the guardian if pi ends first.
 */
export function registerDaemon(child: ChildProcess, daemon: number): void {
  if (child.pid === undefined) return;
  const reg = registry();
  if (!reg.groups.has(child.pid)) return; // closed meanwhile: its close did not see the daemon
  reg.daemons.set(child.pid, daemon);
  tellGuardian(reg, `=${daemon}`);
}

/** Resolves when the daemons being stopped after their children closed are gone. */
export function daemonStops(): Promise<void> {
  return Promise.all([...registry().stopping]).then(() => undefined);
}

/** FalkorDB Lite daemons pi-cgc's children started and that are still listed (tests read it). */
export function liveDaemons(): number[] {
  return [...registry().daemons.values()];
}

/** The process `pid` runs and is a redis-server (not gone, not a zombie, not a reused pid): Linux /proc. */
function isRedisServer(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const state = stat.slice(stat.lastIndexOf(")") + 2)[0];
    if (state === "Z" || state === "X") return false;
    return readFileSync(`/proc/${pid}/cmdline`, "utf8").includes("redis-server");
  } catch {
    return false;
  }
}

/** SIGTERM (redis saves and exits), SIGKILL after 15 s; then the guardian forgets it. */
async function stopDaemon(reg: Registry, daemon: number): Promise<void> {
  if (isRedisServer(daemon)) {
    signalProcess(daemon, "SIGTERM");
    const deadline = Date.now() + 15_000;
    while (isRedisServer(daemon) && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 50).unref());
    }
    if (isRedisServer(daemon)) signalProcess(daemon, "SIGKILL");
  }
  if (reg.guardian) tellGuardian(reg, `~${daemon}`);
}

function signalProcess(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(pid, signal);
  } catch {
    // ESRCH: gone already.
  }
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
  if (reg.groups.size === 0 && reg.daemons.size === 0 && reg.stopping.size === 0) return;
  const pids = [...reg.groups.keys()];
  if (reg.guardian && tellGuardian(reg, "!")) {
    reg.groups.clear();
    reg.daemons.clear();
    return;
  }
  // No guardian: the daemons get SIGTERM now (redis saves and exits), their children the reaper's stop.
  for (const daemon of reg.daemons.values()) if (isRedisServer(daemon)) signalProcess(daemon, "SIGTERM");
  reg.daemons.clear();
  if (pids.length === 0) return;
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
 * Reads `+<pgid> <grace s>` and `-<pgid>` lines, and `=<pid>` and `~<pid>` for the FalkorDB Lite daemons the
 * groups started; `!` stops the listed groups now (pi's exit and signal hooks); end-of-file (pi is gone,
 * however it ended) stops them too and ends the guardian. Each stop runs in the background and is SIGINT,
 * then SIGTERM and SIGKILL to the groups still alive after the grace; the daemons get SIGTERM with the groups
 * (after cgc's own cleanup had its grace to stop them) and SIGKILL if still there 15 s later. A daemon is
 * signalled only while its pid is a redis-server (a pid reused since is left alone).
 */
const GUARDIAN_SCRIPT = `
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
  // Groups and daemons registered before a replacement guardian started are handed to it.
  for (const [pid, grace] of reg.groups) guardian.stdin?.write(`+${pid} ${Math.ceil(grace / 1000)}\n`);
  for (const daemon of reg.daemons.values()) guardian.stdin?.write(`=${daemon}\n`);
  return guardian;
}
