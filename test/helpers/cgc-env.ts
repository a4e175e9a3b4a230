// Test-side access to the real cgc, isolated from the user's own CGC data: cgc 0.6.13 keeps its
// config, contexts and embedded databases under $HOME/.codegraphcontext, so a fresh temporary HOME
// is a fresh CGC. Only tests and fixture scripts use this; the product spawns through src/cgc/runner.ts.
import { type ChildProcess, spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { signalGroup } from "../../src/cgc/children.ts";

export const PROJECT_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "../..");

const manifest = JSON.parse(readFileSync(join(PROJECT_ROOT, "package.json"), "utf8")) as {
  pi: { extensions: [string] };
};
/** pi-cgc as pi loads it: the manifest's extension (the bundle scripts/build.mjs makes from src/). */
export const EXTENSION_ENTRY = join(PROJECT_ROOT, manifest.pi.extensions[0]);

/** Pinned on every child: no watcher after an index, no 80-column wrapping by Rich. */
export const PINNED_ENV: Readonly<Record<string, string>> = { COLUMNS: "10000", ENABLE_AUTO_WATCH: "false" };

// Inherited from the test process because they describe the machine, not the user's CGC:
// cgc reads any of its config keys from the environment, so everything else stays out.
const INHERITED = ["PATH", "LANG", "LC_ALL", "LC_CTYPE", "TZ", "TMPDIR", "TREE_SITTER_LANGUAGE_PACK_LIBS_DIR"];

export function cgcBinary(): string {
  return join(PROJECT_ROOT, ".venv", "bin", "cgc");
}

export interface CgcHome {
  home: string;
  /** `{ HOME }` only: add it to a child's environment to point cgc at this home. */
  env: Record<string, string>;
  cleanup(): void;
}

/** A fresh, empty CGC home. `parent` puts it at `<parent>/home` instead of a new temp dir. */
export function makeCgcHome(parent?: string): CgcHome {
  const home = parent === undefined ? mkdtempSync(join(tmpdir(), "pi-cgc-home-")) : join(parent, "home");
  if (parent !== undefined) rmSync(home, { recursive: true, force: true });
  mkdirSync(home, { recursive: true });
  const real = realpathSync(home);
  return { home: real, env: { HOME: real }, cleanup: () => rmSync(real, { recursive: true, force: true }) };
}

/** The complete environment of a cgc child: machine basics, the pins, then `env` (HOME, overrides). */
export function childEnv(env: Record<string, string>): Record<string, string> {
  const base: Record<string, string> = {};
  for (const key of INHERITED) {
    const value = process.env[key];
    if (value !== undefined) base[key] = value;
  }
  return { ...base, ...PINNED_ENV, ...env };
}

export interface CgcExecOptions {
  cwd: string;
  env: Record<string, string>;
  /** The cgc executable; `.venv/bin/cgc` by default (test/helpers/backends.ts names one per backend). */
  cgc?: string;
  timeoutMs?: number;
}

export interface CgcExecResult {
  /** Exit code; null when the child was killed (timeout). */
  code: number | null;
  stdout: string;
  stderr: string;
  timedOut: boolean;
}

/** Runs `cgc <args>` to completion with stdin ignored. For test setup, not for the product. */
export function cgcExec(args: string[], options: CgcExecOptions): Promise<CgcExecResult> {
  const child = spawnCgc(args, options, "ignore");
  const timeoutMs = options.timeoutMs ?? 300_000;
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    signalGroup(child.pid, "SIGKILL");
  }, timeoutMs);
  return collect(child).then((result) => {
    clearTimeout(timer);
    return { ...result, timedOut };
  });
}

export interface LongLivedCgc {
  child: ChildProcess;
  stdout(): string;
  stderr(): string;
  /** Resolves when a line matching `pattern` appears on the stream; rejects if the child exits first. */
  waitForLine(stream: "stdout" | "stderr", pattern: RegExp): Promise<string>;
  /** Sends `signal` (SIGINT by default, so cgc's own cleanup runs) and resolves with the final output. */
  stop(signal?: NodeJS.Signals): Promise<CgcExecResult>;
  exited: Promise<CgcExecResult>;
}

/** Starts a long-lived cgc (`watch`, `mcp start`) with stdin as a pipe for JSON-RPC. */
export function cgcStart(args: string[], options: Omit<CgcExecOptions, "timeoutMs">): LongLivedCgc {
  const child = spawnCgc(args, options, "pipe");
  const text = { stdout: "", stderr: "" };
  const waiters: Array<{ stream: "stdout" | "stderr"; pattern: RegExp; resolve(line: string): void }> = [];
  const check = () => {
    for (const waiter of [...waiters]) {
      const line = text[waiter.stream].split("\n").find((candidate) => waiter.pattern.test(candidate));
      if (line === undefined) continue;
      waiters.splice(waiters.indexOf(waiter), 1);
      waiter.resolve(line);
    }
  };
  child.stdout?.on("data", (chunk: Buffer) => {
    text.stdout += chunk.toString("utf8");
    check();
  });
  child.stderr?.on("data", (chunk: Buffer) => {
    text.stderr += chunk.toString("utf8");
    check();
  });
  const exited = new Promise<CgcExecResult>((done) => {
    child.on("close", (code) => done({ code, stdout: text.stdout, stderr: text.stderr, timedOut: false }));
  });
  return {
    child,
    stdout: () => text.stdout,
    stderr: () => text.stderr,
    waitForLine(stream, pattern) {
      return new Promise((resolveLine, reject) => {
        waiters.push({ stream, pattern, resolve: resolveLine });
        check();
        exited.then((result) => {
          reject(new Error(`cgc ${args.join(" ")} exited (${result.code}) before ${pattern}:\n${text.stderr}`));
        });
      });
    },
    stop(signal = "SIGINT") {
      signalGroup(child.pid, signal);
      return exited;
    },
    exited,
  };
}

function spawnCgc(args: string[], options: Omit<CgcExecOptions, "timeoutMs">, stdin: "ignore" | "pipe") {
  // Own process group, so a kill reaches anything cgc starts (Kùzu migration, FalkorDB workers).
  return spawn(options.cgc ?? cgcBinary(), args, {
    cwd: options.cwd,
    env: childEnv(options.env),
    stdio: [stdin, "pipe", "pipe"],
    detached: true,
  });
}

function collect(child: ChildProcess): Promise<Omit<CgcExecResult, "timedOut">> {
  const out: Buffer[] = [];
  const err: Buffer[] = [];
  child.stdout?.on("data", (chunk: Buffer) => out.push(chunk));
  child.stderr?.on("data", (chunk: Buffer) => err.push(chunk));
  return new Promise((done, fail) => {
    child.on("error", fail);
    child.on("close", (code) =>
      done({ code, stdout: Buffer.concat(out).toString("utf8"), stderr: Buffer.concat(err).toString("utf8") }),
    );
  });
}

/**
 * Stops a long-lived cgc as the product's own stops do: SIGINT (cgc's exit handler saves and stops a FalkorDB Lite
 * daemon it started), then SIGTERM and SIGKILL, 10 s apart. `cgc mcp start` has stayed alive after SIGINT here,
 * its daemon already stopped.
 */
export async function stopEscalating(cgc: LongLivedCgc): Promise<void> {
  for (const signal of ["SIGINT", "SIGTERM", "SIGKILL"] as const) {
    let timer: NodeJS.Timeout | undefined;
    const grace = new Promise<"alive">((resolve) => {
      timer = setTimeout(() => resolve("alive"), 10_000);
    });
    const outcome = await Promise.race([cgc.stop(signal), grace]);
    clearTimeout(timer);
    if (outcome !== "alive") return;
  }
}
