// Test-side access to pi-cgc's incremental graph engine (engine/pi-cgc-engine.py) and its parity
// harness (engine/parity.py), both run by the project venv's python: the interpreter that owns cgc.

import { spawn, spawnSync } from "node:child_process";
import { join } from "node:path";
import { expect } from "vitest";
import { childEnv, PROJECT_ROOT } from "./cgc-env.ts";

/** The engine with a fault planted (engine/tests/fault_engine.py): its flags, then the engine's own arguments. */
export const FAULT_ENGINE = join(PROJECT_ROOT, "engine", "tests", "fault_engine.py");

export function venvPython(): string {
  return join(PROJECT_ROOT, ".venv", "bin", "python");
}

/**
 * Runs a Python script against the engine's own functions (`python -c SCRIPT ...args`) and returns the `report`
 * of the last line it emitted; the script fails the test when it exits otherwise than 0.
 */
export function engineScriptReport<T>(script: string, args: string[] = []): T {
  const run = spawnSync(venvPython(), ["-c", script, ...args], { encoding: "utf8", timeout: 120_000 });
  expect(run.status, run.stderr).toBe(0);
  return (JSON.parse(run.stdout.trim().split("\n").at(-1) ?? "{}") as { report: T }).report;
}

export interface ParityStep {
  step: number;
  name: string;
  ok: boolean;
  code: string | null;
  ms: number;
  /** The last step on KùzuDB: a linked worktree's graph from the main checkout's (its line: `taken`). */
  worktree?: boolean;
  taken?: string | null;
  /** Whether the update loaded its rows in bulk (KùzuDB; null where the step wrote nothing, or on another backend). */
  bulk?: boolean | null;
  lockMs: number;
  /** Changed paths whose old content the engine never held (it started after the change). */
  unsure: number;
  /** Whether the engine's last start took its cache as the graph's model. */
  trusted?: boolean;
  /**
   * How the engine met this step's change (--late-start): from its cache, told "written elsewhere", rebuilt, or a
   * graph `cgc index` wrote before the change, adopted after it.
   */
  mode: "running" | "cache" | "elsewhere" | "rebuilt" | "adopt";
  /** What the engine's comparison with a full index found differing (adopt, or an untrusted first update). */
  adopted?: { files: number; links: number; stale: number; modules: number } | null;
  differing: number;
  onlyEngine: string[];
  onlyFresh: string[];
}

export interface ParitySummary {
  scenario: string;
  steps: number;
  failedSteps: number;
  differingLines: number;
  engineExit: number;
  seconds: number;
}

export interface ParityRun {
  code: number | null;
  ready: Record<string, unknown>;
  steps: ParityStep[];
  summary?: ParitySummary;
  stderr: string;
}

/** Replays a scenario (`small` or `long`, engine/parity.py) and collects its JSON lines; `env` adds e.g. nothing, or the switch. */
export function runParity(args: string[], env: Record<string, string> = {}): Promise<ParityRun> {
  const child = spawn(venvPython(), [join(PROJECT_ROOT, "engine", "parity.py"), ...args], {
    cwd: PROJECT_ROOT,
    env: childEnv(env),
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (chunk: Buffer) => {
    stdout += chunk.toString("utf8");
  });
  child.stderr.on("data", (chunk: Buffer) => {
    // cgc and the engine log a lot; the tail is enough to explain a failure.
    stderr = (stderr + chunk.toString("utf8")).slice(-20_000);
  });
  return new Promise((resolve, reject) => {
    child.on("error", reject);
    child.on("close", (code) => {
      const lines = stdout
        .split("\n")
        .filter((line) => line.trim() !== "")
        .map((line) => JSON.parse(line) as Record<string, unknown>);
      resolve({
        code,
        ready: lines.find((line) => line.event === "ready") ?? {},
        steps: lines.filter((line) => typeof line.step === "number") as unknown as ParityStep[],
        summary: lines.find((line) => line.event === "summary") as unknown as ParitySummary | undefined,
        stderr,
      });
    });
  });
}

/** Every step of a replay left the engine's graph equal to a fresh full index, and the harness ended cleanly. */
export function expectParity(run: ParityRun): void {
  const failed = run.steps.filter((step) => !step.ok || step.differing !== 0);
  expect(failed, `${JSON.stringify(failed, null, 1)}\n${run.stderr.slice(-4000)}`).toEqual([]);
  expect(run.summary, run.stderr.slice(-4000)).toMatchObject({ failedSteps: 0, differingLines: 0, engineExit: 0 });
  expect(run.steps.length).toBe(run.summary?.steps);
  expect(run.code).toBe(0);
}
