// Shared by the reliability suites: the process table (which cgc processes are alive, found by the
// isolated CGC home in their environment), pi's CLI, the graph's record and stopping a cgc a case started
// (polling is test/helpers/poll.ts). Linux /proc only.
import { execFileSync } from "node:child_process";
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { signalGroup } from "../../src/cgc/children.ts";
import { cgcExec, EXTENSION_ENTRY, type LongLivedCgc, PROJECT_ROOT } from "../helpers/cgc-env.ts";
import { waitFor } from "../helpers/poll.ts";

export const PI_CLI = join(PROJECT_ROOT, "node_modules", "@mariozechner", "pi-coding-agent", "dist", "cli.js");
export const EXTENSION = EXTENSION_ENTRY;
export const FAKES = join(PROJECT_ROOT, "test", "fixtures", "fakes");

/**
 * What pi-cgc promises after pi is SIGKILLed: no cgc child outlives it by more than this. The guardian
 * (src/cgc/children.ts) sends SIGINT at once, SIGTERM after killGraceMs (2 s) and SIGKILL after another
 * 2 s; the rest is slack for a loaded machine.
 */
export const SIGKILL_BOUND_MS = 6_000;

export interface ProcessInfo {
  pid: number;
  ppid: number;
  pgid: number;
  args: string;
}

/** Live (non-zombie) processes whose environment holds HOME=<home> and whose command line matches. */
export function processesOf(home: string, match: RegExp = /cgc/): ProcessInfo[] {
  const found: ProcessInfo[] = [];
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const environ = readFileSync(`/proc/${name}/environ`, "latin1").split("\0");
      if (!environ.includes(`HOME=${home}`)) continue;
      const args = readFileSync(`/proc/${name}/cmdline`, "latin1").split("\0").join(" ").trim();
      if (!match.test(args)) continue;
      // stat: pid (comm) state ppid pgrp …; comm may hold spaces and parentheses, so read after the last ')'.
      const stat = readFileSync(`/proc/${name}/stat`, "latin1");
      const [state, ppid, pgid] = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      if (state === "Z" || state === "X") continue;
      found.push({ pid: Number(name), ppid: Number(ppid), pgid: Number(pgid), args });
    } catch {
      // exited meanwhile, or not ours to read
    }
  }
  return found;
}

/**
 * What a process is doing, for a timeout's message: its state (R running, S sleeping, D in the kernel), the CPU
 * seconds it used, and where the kernel holds it (wchan). A process that keeps using CPU is busy or spinning;
 * one asleep on a futex or a pipe waits for someone.
 */
export function processActivity(pid: number): string {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "latin1");
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    // After the comm: state is field 3 (index 0 here), utime and stime fields 14 and 15 (indexes 11 and 12).
    const cpuSeconds = (Number(fields[11]) + Number(fields[12])) / 100;
    let wchan = "";
    try {
      wchan = readFileSync(`/proc/${pid}/wchan`, "latin1").trim();
    } catch {
      // not readable here
    }
    return `state ${fields[0]}, ${cpuSeconds.toFixed(1)} s CPU${wchan && wchan !== "0" ? `, waiting in ${wchan}` : ""}`;
  } catch {
    return "gone";
  }
}

/** The Python stacks of process `pid` (py-spy, installed into .venv by scripts/setup.mjs), or why there are none. */
export function pythonStacks(pid: number): string {
  try {
    return execFileSync(join(PROJECT_ROOT, ".venv", "bin", "py-spy"), ["dump", "--pid", String(pid)], {
      encoding: "utf8",
      timeout: 20_000,
      stdio: ["ignore", "pipe", "pipe"],
    }).trim();
  } catch (error) {
    return `no stacks: ${(error as Error).message.split("\n")[0]}`;
  }
}

/** cgc processes (the Python interpreter running .venv/bin/cgc) of an isolated CGC home. */
export function cgcProcesses(home: string): ProcessInfo[] {
  return processesOf(home, /\/cgc(-[a-z]+)?( |$)/);
}

/**
 * The end of every case: no cgc process of this home may be left. Waits for stragglers within `graceMs`
 * (a stop in progress), then kills what is left of this home's own processes so the next case starts
 * clean, and fails the case.
 */
export async function expectNoCgcLeft(home: string, graceMs = 15_000): Promise<void> {
  try {
    await waitFor(() => cgcProcesses(home).length === 0, "no cgc process left", graceMs);
  } catch (error) {
    const left = cgcProcesses(home);
    for (const process_ of left) signalGroup(process_.pgid, "SIGKILL");
    throw new Error(`${(error as Error).message}: ${left.map((p) => `${p.pid} ${p.args}`).join("; ")}`);
  }
}

/** The chip text a pi RPC frame sets, if it is pi-cgc's status update. */
export function chipOf(frame: { type: string; [key: string]: unknown }): string | undefined {
  return frame.type === "extension_ui_request" && frame.method === "setStatus" && frame.statusKey === "cgc"
    ? (frame.statusText as string | undefined)
    : undefined;
}

/** Where an isolated CGC home keeps its embedded (Kùzu) database. */
export function kuzuPath(home: string): string {
  return join(home, ".codegraphcontext", "global", "db", "kuzudb");
}

export interface GraphRecord {
  /** The workspace's Repository node exists. */
  present: boolean;
  files: number;
  functions: string[];
}

/** Ground truth from the graph itself, through the real cgc (test side, not the product's runner). */
export async function graphRecord(home: Record<string, string>, root: string): Promise<GraphRecord> {
  const query =
    `MATCH (r:Repository) WHERE r.path = '${root}' OPTIONAL MATCH (r)-[:CONTAINS*1..]->(f:File) ` +
    "OPTIONAL MATCH (f)-[:CONTAINS]->(fn:Function) RETURN count(DISTINCT f) AS files, collect(DISTINCT fn.name) AS functions";
  const result = await cgcExec(["query", query], { cwd: root, env: home });
  if (result.code !== 0) throw new Error(`ground-truth query failed: ${result.stdout}\n${result.stderr}`);
  const rows = JSON.parse(result.stdout.slice(result.stdout.indexOf("["))) as Array<{
    files: number;
    functions: string[];
  }>;
  const row = rows[0];
  return row
    ? { present: true, files: row.files, functions: (row.functions ?? []).filter((name) => name !== null).sort() }
    : { present: false, files: 0, functions: [] };
}

/**
 * Writes a Python file of `functions` small functions calling each other: cgc needs seconds to index it on
 * any machine, so a run over it can be interrupted (killed, replaced) reliably while it writes. With `callsEach`
 * calls in each function it is slow for the engine's update too, whose write is fast in bulk: cgc's resolution
 * reads every function of the file for each call.
 */
export function writeSlowToIndexFile(path: string, functions = 1_500, callsEach = 1): void {
  const calls = (i: number) =>
    Array.from({ length: callsEach - 1 }, (_, k) => `    generated_${(i + k + 2) % functions}(value - 1)\n`).join("");
  const body = Array.from(
    { length: functions },
    (_, i) =>
      `def generated_${i}(value):\n${calls(i)}    return generated_${(i + 1) % functions}(value) if value else ${i}\n`,
  ).join("\n\n");
  writeFileSync(path, body);
}

/**
 * Stops a cgc the test started itself (a lock holder): SIGINT so its cleanup runs, then SIGKILL to its group
 * if it has not gone within `graceMs`. The real `cgc watch` can hang in its own SIGINT cleanup (its main
 * thread joining a stuck thread, seen in the soak); pi-cgc's runner escalates the same way.
 */
export async function stopOwnCgc(holder: LongLivedCgc, graceMs = 5_000): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const gone = await Promise.race([
    holder.stop("SIGINT").then(() => true),
    new Promise<false>((resolve) => {
      timer = setTimeout(() => resolve(false), graceMs);
    }),
  ]);
  clearTimeout(timer);
  if (!gone) signalGroup(holder.child.pid, "SIGKILL");
  await holder.exited;
}
