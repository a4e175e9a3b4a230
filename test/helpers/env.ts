// Environment for the in-process pi of a test (pi-cgc reads process.env): what a case sets is put back
// as it was when the case ends (`afterEach(restoreEnv)`), so no case sees another's settings.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const saved = new Map<string, string | undefined>();

/** Sets each variable for the rest of the case, remembering the value it had before the first change. */
export function withEnv(values: Record<string, string>): void {
  for (const [key, value] of Object.entries(values)) {
    if (!saved.has(key)) saved.set(key, process.env[key]);
    process.env[key] = value;
  }
}

/** Puts back every variable `withEnv` changed: its earlier value, or unset where it had none. */
export function restoreEnv(): void {
  for (const [key, value] of saved) {
    if (value === undefined) delete process.env[key];
    else process.env[key] = value;
  }
  saved.clear();
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
