// Who wrote the graph last. cgc stamps the Repository node's `indexed_at` when it indexes — `cgc index`,
// `cgc watch`'s first scan, pi-cgc's engine on each update — and records nothing else about the writer (a
// change `cgc watch` applies later leaves no stamp: the engine distrusts its model after meeting the lock,
// ADR 0011). pi-cgc keeps the windows in which its own runs wrote (every session's, in pi's agent
// directory, never in the workspace), so a stamp that falls in none of them, on a graph this session did not
// start with, was written by another cgc process: a `cgc watch` starting in a terminal, an MCP server, the
// user's own command. What such a writer left is not known to equal a full index of the tree (`cgc watch`
// measurably does not: ADR 0010), so the graph is not called fresh again before a full rebuild. A graph found
// at session start is taken as its index time says, as before: the windows of earlier sessions cannot tell a
// user's `cgc index --force` from a watcher.
import { appendFileSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname } from "node:path";
import { graphRecordPath } from "../state/records.ts";

/** cgc stamps `indexed_at` inside its run; the window is taken a little wider than pi-cgc saw it. */
const SLACK_MS = 2_000;
/** Lines kept when the record is compacted: far more windows than can matter to a running session. */
const KEEP_LINES = 200;

type Line = { id: string; from: number; pid: number } | { id: string; to: number } | { id: string; void: true };
type Window = { from: number; to?: number; pid: number };

/** This process's own windows, by record: they count even when the agent directory cannot be written. */
const ownWindows = new Map<string, Array<Window & { id: string }>>();

/**
 * Closes a write window: `wrote` false for a run that never opened the database (it met the lock), whose
 * window then covers nothing — a stamp inside it is another writer's. `id` names it (`writtenByPiCgc`).
 */
export type CloseWindow = ((wrote?: boolean) => void) & { readonly id: string };

/** Whether a process lives (one of another user's counts: it is there, only not ours to signal). */
export function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

/**
 * pi-cgc is about to write this graph (an index, a rebuild, an engine update, its own watcher): the
 * returned function closes the window. An agent directory that cannot be written costs only the record.
 */
export function openWriteWindow(env: NodeJS.ProcessEnv, root: string): CloseWindow {
  const path = graphRecordPath(env, root, "writes");
  const id = `${process.pid}-${Date.now()}-${Math.random().toString(36).slice(2, 8)}`;
  const append = (line: Line) => {
    try {
      mkdirSync(dirname(path), { recursive: true });
      appendFileSync(path, `${JSON.stringify(line)}\n`); // O_APPEND: sessions never interleave a line
    } catch {
      // no record: this process still knows its own windows (ownWindows); other sessions do not
    }
  };
  const window = { id, from: Date.now(), pid: process.pid } as Window & { id: string };
  ownWindows.set(path, [...(ownWindows.get(path) ?? []).slice(-KEEP_LINES), window]);
  append({ id, from: window.from, pid: window.pid });
  const close = (wrote = true) => {
    if (window.to !== undefined) return;
    window.to = Date.now();
    if (wrote) append({ id, to: window.to });
    else {
      ownWindows.set(
        path,
        (ownWindows.get(path) ?? []).filter((own) => own !== window),
      );
      append({ id, void: true });
    }
    compact(path);
  };
  return Object.assign(close, { id });
}

function compact(path: string): void {
  try {
    const lines = readFileSync(path, "utf8").split("\n").filter(Boolean);
    if (lines.length > KEEP_LINES * 2) writeFileSync(path, `${lines.slice(-KEEP_LINES).join("\n")}\n`);
  } catch {
    // as above
  }
}

/**
 * Whether a stamp falls in a window of pi-cgc's (open windows of live processes reach to now), but for the
 * window `except` (a run asking about a stamp it found before it wrote).
 */
export function writtenByPiCgc(env: NodeJS.ProcessEnv, root: string, stampMs: number, except?: string): boolean {
  const path = graphRecordPath(env, root, "writes");
  const windows = new Map<string, Window>((ownWindows.get(path) ?? []).map((window) => [window.id, { ...window }]));
  if (existsSync(path))
    try {
      for (const text of readFileSync(path, "utf8").split("\n")) {
        if (!text) continue;
        const line = JSON.parse(text) as Line;
        if ("from" in line) windows.set(line.id, { from: line.from, pid: line.pid, ...windows.get(line.id) });
        else if ("void" in line) windows.delete(line.id);
        else {
          const open = windows.get(line.id);
          if (open) open.to = line.to;
        }
      }
    } catch {
      // a torn last line: the windows read so far still count
    }
  if (except !== undefined) windows.delete(except);
  const now = Date.now();
  for (const window of windows.values()) {
    const to = window.to ?? (pidAlive(window.pid) ? now : window.from);
    if (stampMs >= window.from - SLACK_MS && stampMs <= to + SLACK_MS) return true;
  }
  return false;
}

export interface GraphProvenance {
  /**
   * A settled probe's view of the graph (`indexedAt` undefined: no graph, or cgc recorded no time). Returns
   * why the graph was written by another process since this session last saw it, or undefined.
   */
  check(indexedAt: string | undefined, hasGraph: boolean): string | undefined;
  /**
   * A write of pi-cgc's own (the engine's update, in the window `window`) found the stamp `before` and left
   * `after`. Returns why another process wrote between the stamp this session last knew and this write, or
   * undefined; the stamp known from now on is `after`.
   */
  ownWrite(before: string | null | undefined, after: string | null | undefined, window: string): string | undefined;
}

export function createGraphProvenance(env: NodeJS.ProcessEnv, root: () => string): GraphProvenance {
  let seen = false;
  let known: string | undefined;
  return {
    check(indexedAt, hasGraph) {
      const first = !seen;
      seen = true;
      const previous = known;
      known = hasGraph ? indexedAt : undefined;
      if (first || !hasGraph || indexedAt === undefined || indexedAt === previous) return undefined;
      return outside(indexedAt);
    },
    ownWrite(before, after, window) {
      const previous = known;
      if (after) known = after;
      if (!seen || !before || previous === undefined || before === previous) return undefined;
      return outside(before, window);
    },
  };

  function outside(stamp: string, except?: string): string | undefined {
    const stampMs = Date.parse(stamp);
    if (Number.isNaN(stampMs) || writtenByPiCgc(env, root(), stampMs, except)) return undefined;
    return `the graph was written at ${stamp} by another cgc process, not by pi-cgc (a cgc watch, an MCP server or a cgc command), and such a write is not known to leave what a full index would`;
  }
}
