// The client of pi-cgc's incremental engine (engine/pi-cgc-engine.py, ADR 0011): a long-lived child run by
// cgc's own Python through the one runner, that applies "these paths changed" to the graph with cgc's own
// library and leaves it as a full index of the same tree would. JSON lines: one `ready` (or `refused`)
// line first, then one answer per request, matched by id. The engine opens the database only to write
// or read back, and lets go of it when idle, so cgc's own processes get in.
import { createHash } from "node:crypto";
import { existsSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { ENGINE_SCRIPT, type ParseStoreOptions, parseStoreArgs } from "../cgc/engine-script.ts";
import type { PossibleSite, PossibleTarget } from "../cgc/possible-sites.ts";
import type { LongLivedHandle, RunCode, Runner } from "../cgc/runner.ts";
import { ENGINE_WRITTEN_ELSEWHERE } from "../state/ledger.ts";

export type { PossibleSite, PossibleTarget } from "../cgc/possible-sites.ts";

export interface EngineFacts {
  cgcVersion: string;
  backend: string;
  files: number;
  startMs: number;
  warm: boolean;
  /** Started from a cache that is what the graph holds; otherwise it compares the graph with the tree (adopt). */
  trusted: boolean;
}

/**
 * DIVERGED: an update stopped half-way left the graph unknown. NO_GRAPH: the graph holds no index of the root.
 * REBUILD: nothing written; the update would write every file's links again, which a full index does faster.
 */
export type EngineCode = RunCode | "DIVERGED" | "NO_GRAPH" | "REBUILD" | "UNSUPPORTED";
export type EngineAnswer<T> = { ok: true; value: T } | { ok: false; code: EngineCode; reason: string };

export interface UpdateResult {
  /** The Repository's `indexed_at` before and after the write (cgc stamps it on every write, whoever writes). */
  stampBefore: string | null;
  stampAfter: string | null;
  written: string[];
  removed: string[];
  ms: number;
  lockMs: number;
  resolved: number;
  /** Files other than the changed ones whose links were written again. */
  rewritten: number;
  /** Whether the rows went in bulk from the replay of a full index (KùzuDB, many files) rather than by cgc's writer. */
  bulk?: boolean;
  /** The update's work before the database (walk, parse, resolution): wall ms, and CPU ms. */
  resolveMs?: number;
  resolveCpuMs?: number;
  /** Where the time under the lock went, ms per step (the bench reports them). */
  phases?: Record<string, number>;
  /** Where the engine compared the graph with a full index of the tree (adopt): what differed, by kind. */
  adopted?: AdoptedCounts | null;
}

/** What a graph written elsewhere held otherwise than a full index of the tree: files written again, and so on. */
export interface AdoptedCounts {
  files: number;
  links: number;
  stale: number;
  modules: number;
}

export interface VerifyResult {
  reflected: string[];
  unreflected: string[];
}

export interface PossibleResult {
  /** One list per target, in the order asked. */
  sites: PossibleSite[][];
}

export type EnginePhase =
  | { phase: "starting" }
  | { phase: "ready"; facts: EngineFacts }
  | { phase: "refused" | "failed" | "stopped"; reason: string };

export interface Engine {
  readonly phase: EnginePhase;
  readonly pid: number | undefined;
  /** Settles with the first line: ready, or why not. */
  readonly started: Promise<EnginePhase>;
  update(paths: readonly string[], budgetMs: number): Promise<EngineAnswer<UpdateResult>>;
  verify(paths: readonly string[], budgetMs: number): Promise<EngineAnswer<VerifyResult>>;
  /**
   * The graph was rebuilt by a full index: the engine reads the tree again (what the graph now holds), but for
   * `unknown`, paths changed since the index read them, whose content in the graph it cannot know.
   */
  rebuilt(unknown: string[], budgetMs: number): Promise<EngineAnswer<unknown>>;
  /**
   * An engine that started without the graph's model compares the graph with a full index of the tree and writes
   * only what differs; from then on it holds the model. UNSUPPORTED: a tree the engine cannot compare (its first
   * update then writes every file's links).
   */
  adopt(budgetMs: number): Promise<EngineAnswer<UpdateResult>>;
  /**
   * Each target's possible call sites, from the engine's parse of the tree (the graph is not read). It answers
   * from memory; past its budget the answer is TIMEOUT and the engine keeps running (nothing was written).
   */
  possible(targets: readonly PossibleTarget[], budgetMs: number): Promise<EngineAnswer<PossibleResult>>;
  stop(): Promise<void>;
}

export interface EngineOptions {
  runner: Pick<Runner, "startLongLived">;
  python: string;
  root: string;
  /** Outside the workspace: the engine's warm-start cache. */
  cacheDir: string;
  /** The parse store (each file's parse by its content) and its bound in MB (0: none kept). */
  parseStore?: ParseStoreOptions;
  /** Budget of the start (parse of the tree, or the warm cache). */
  startBudgetMs: number;
  /** How long the engine keeps the database open after its last request (its `--hold-ms`). */
  holdMs?: number;
  /** The CGC named context whose graph the engine keeps (a linked worktree's); default: cgc's default graph. */
  context?: string;
  env?: Record<string, string>;
  /**
   * The program and its leading arguments, for tests only: engine/tests/fault_engine.py and a fault. Default: the
   * engine script pi-cgc ships.
   */
  program?: string[];
}

type Waiter = (answer: Record<string, unknown>) => void;

/**
 * Whether the engine's cache for `root` is the graph's model: saved, with neither of the marks that say it may not
 * be (engine/pi_cgc_engine/cache.py: the cache file is named by the sha1 of the root, its `.untrusted` mark beside
 * it, and WRITTEN_ELSEWHERE in the folder). Without it the engine must compare the graph with the tree.
 */
export function engineModelKept(cacheDir: string, root: string): boolean {
  const cache = join(cacheDir, `${createHash("sha1").update(root).digest("hex")}.pickle`);
  return (
    existsSync(cache) &&
    !existsSync(cache.replace(/\.pickle$/, ".untrusted")) &&
    !existsSync(join(cacheDir, ENGINE_WRITTEN_ELSEWHERE))
  );
}

export function startEngine(options: EngineOptions): Engine {
  mkdirSync(options.cacheDir, { recursive: true });
  let phase: EnginePhase = { phase: "starting" };
  let nextId = 0;
  const waiting = new Map<number, Waiter>();
  let markStarted: (phase: EnginePhase) => void = () => {};
  const started = new Promise<EnginePhase>((resolve_) => {
    markStarted = resolve_;
  });
  const settleStart = (next: EnginePhase) => {
    phase = next;
    markStarted(next);
  };

  const onStdout = (line: string) => {
    let message: Record<string, unknown>;
    try {
      message = JSON.parse(line) as Record<string, unknown>;
    } catch {
      return; // not ours: the engine writes nothing else to stdout, but a library might
    }
    if (message.event === "ready" && phase.phase === "starting") {
      // An engine on KùzuDB starts no FalkorDB Lite daemon (cgc can name Lite and run on KùzuDB without it).
      if (message.backend !== "falkordb") handle.leaveLiteTurn();
      settleStart({ phase: "ready", facts: message as unknown as EngineFacts });
    } else if (message.event === "refused" && phase.phase === "starting") {
      settleStart({ phase: "refused", reason: String(message.reason ?? "refused") });
    } else if (typeof message.id === "number") {
      waiting.get(message.id)?.(message);
      waiting.delete(message.id);
    }
  };

  const handle: LongLivedHandle & { child: import("node:child_process").ChildProcess | undefined } =
    options.runner.startLongLived(
      [
        ...(options.program ?? [ENGINE_SCRIPT]),
        ...parseStoreArgs(options.parseStore),
        "serve",
        "--root",
        options.root,
        "--cache-dir",
        options.cacheDir,
        ...(options.holdMs === undefined ? [] : ["--hold-ms", String(options.holdMs)]),
        ...(options.context === undefined ? [] : ["--context", options.context]),
      ],
      {
        cwd: options.root,
        env: options.env,
        stdin: true,
        program: { path: options.python, name: "pi-cgc engine" },
        onLine: (line, stream) => {
          if (stream === "stdout") onStdout(line);
        },
      },
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

  /** `readOnly`: a request that writes nothing; past its budget the engine is left running. */
  function request<T>(
    op: string,
    body: Record<string, unknown>,
    budgetMs: number,
    readOnly = false,
  ): Promise<EngineAnswer<T>> {
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
        // An update cut off half-way leaves the engine's memory and the graph unknown to each other.
        phase = { phase: "failed", reason };
        void handle.stop();
        resolve_({ ok: false, code: "TIMEOUT", reason });
      }, budgetMs);
      waiting.set(id, (answer) => {
        clearTimeout(timer);
        if (answer.ok === true) resolve_({ ok: true, value: answer as unknown as T });
        else
          resolve_({
            ok: false,
            code: (answer.code as EngineCode) ?? "FAILED",
            reason: String(answer.reason ?? "the engine failed"),
          });
      });
      handle.child?.stdin?.write(`${JSON.stringify({ id, op, ...body })}\n`);
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
    update: (paths, budgetMs) => request<UpdateResult>("update", { paths }, budgetMs),
    verify: (paths, budgetMs) => request<VerifyResult>("verify", { paths }, budgetMs),
    rebuilt: (unknown, budgetMs) => request<unknown>("rebuilt", { unknown }, budgetMs),
    adopt: (budgetMs) => request<UpdateResult>("adopt", {}, budgetMs),
    possible: (targets, budgetMs) => request<PossibleResult>("possible", { targets }, budgetMs, true),
    async stop() {
      clearTimeout(startTimer);
      await handle.stop();
    },
  };
}
