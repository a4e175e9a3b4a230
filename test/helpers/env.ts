// The environment for the in-process pi of a test (pi-cgc reads process.env), set through this one helper.
// `suiteEnv` sets what a whole file runs with (in beforeAll; `restoreSuiteEnv` in afterAll puts back what was
// there); `withEnv` sets what one case needs, and `restoreEnv` (afterEach) puts back what the case changed, so
// no case sees another's settings; `scopedEnv` sets what a stretch of code needs until its restore is called.
// A value of undefined unsets the variable.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

type Values = Record<string, string | undefined>;

const saved = new Map<string, string | undefined>();
const suiteSaved = new Map<string, string | undefined>();

function apply(values: Values, memory: Map<string, string | undefined>): void {
  for (const [key, value] of Object.entries(values)) {
    if (!memory.has(key)) memory.set(key, process.env[key]);
    if (value === undefined) delete process.env[key];
    else process.env[key] = value;
  }
}

function putBack(memory: Map<string, string | undefined>): void {
  for (const [key, value] of memory) {
    if (value === undefined) delete process.env[key];
    else process.env[key] = value;
  }
  memory.clear();
}

/** Sets each variable for the rest of the case, remembering the value it had before the first change. */
export function withEnv(values: Values): void {
  apply(values, saved);
}

/** Puts back every variable `withEnv` changed: its earlier value, or unset where it had none. */
export function restoreEnv(): void {
  putBack(saved);
}

/** Sets each variable for the whole file (beforeAll): the settings every case starts from. */
export function suiteEnv(values: Values): void {
  apply(values, suiteSaved);
}

/** Puts back every variable `suiteEnv` changed (afterAll). */
export function restoreSuiteEnv(): void {
  putBack(suiteSaved);
}

/** Sets each variable until the returned function puts back what was there: a scope of its own, nested freely. */
export function scopedEnv(values: Values): () => void {
  const memory = new Map<string, string | undefined>();
  apply(values, memory);
  return () => putBack(memory);
}

const agentDirs: string[] = [];

/** A fresh pi agent directory (HOME too) for the records a case writes; `removeAgentDirs` (afterEach) removes it. */
export function scratchAgentEnv(): NodeJS.ProcessEnv {
  const dir = mkdtempSync(join(tmpdir(), "pi-cgc-agent-"));
  agentDirs.push(dir);
  return { PI_CODING_AGENT_DIR: dir, HOME: dir };
}

export function removeAgentDirs(): void {
  for (const dir of agentDirs.splice(0)) rmSync(dir, { recursive: true, force: true });
}
