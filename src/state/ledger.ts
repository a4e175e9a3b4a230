// What pi-cgc remembers about one graph between sessions: its ledger, one per workspace and database, in pi's
// agent directory (never in the workspace, never among CGC's own files). It holds the graph's unfinished runs,
// pi-cgc's own write windows, the tree the graph was last verified on (the change tracker's file) and the
// engine's warm-start cache with its "written elsewhere" mark. This module is the only one that knows where
// each lives and what it says; the files are those earlier versions wrote, so a user's record carries over:
//   pi-cgc/runs/<key>.json     the note of an index, sync or update under way (or stopped by its budget)
//   pi-cgc/writes/<key>.json   pi-cgc's write windows, one JSON line per opening, closing or voiding
//   pi-cgc/trees/<key>.json    the tree the graph reflects (written and read by workspace/tracker.ts)
//   pi-cgc/engine/<key>/       the engine's cache; `graph-written-elsewhere` in it is read by the engine
//                              (engine/pi_cgc_engine/cache.py WRITTEN_ELSEWHERE)
// cgc writes the graph without a transaction and records no completion, so a run that never settled (pi
// SIGKILLed, the session replaced mid-sync, a crash) can leave a graph cgc itself would call indexed: the next
// probe reads its note as start-time drift. Only a run that ended OK removes it. A run stopped by its time
// budget says so, and no automatic run that would only meet the same end is started (lifecycle/maintenance.ts).
// cgc stamps the Repository node's `indexed_at` and nothing else about the writer: a stamp outside every
// window of pi-cgc's was written by another cgc process (lifecycle/provenance.ts judges it).
import { createHash } from "node:crypto";
import { appendFileSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { agentDir } from "../config/load.ts";

/** The database a workspace's graph lives in, as far as the environment names it. */
const DATABASE_VARIABLES = ["HOME", "DEFAULT_DATABASE", "FALKORDB_HOST", "FALKORDB_PORT", "NEO4J_URI"];
/** The file in the engine's cache folder that the engine (engine/pi_cgc_engine/cache.py) reads as WRITTEN_ELSEWHERE. */
export const ENGINE_WRITTEN_ELSEWHERE = "graph-written-elsewhere";
/** cgc stamps `indexed_at` inside its run; the window is taken a little wider than pi-cgc saw it. */
const SLACK_MS = 2_000;
/** Window lines kept when the record is compacted: far more windows than can matter to a running session. */
const KEEP_LINES = 200;

export interface RunNote {
  root: string;
  what: string;
  startedAt: string;
  pid: number;
  /** Set when the run was stopped by its time budget (`timeouts.maintenanceMs`): how long it had run, in ms. */
  timedOutAfterMs?: number;
}

/**
 * Settles a run with its code (and, for TIMEOUT, how long it ran). `windowId` names the run's write window
 * (`writtenByPiCgc`'s `except`).
 */
export type SettleRun = ((outcome: string, ranForMs?: number) => void) & { readonly windowId: string };

/**
 * Closes a write window: `wrote` false for a run that never opened the database (it met the lock), whose
 * window then covers nothing — a stamp inside it is another writer's. `id` names it (`writtenByPiCgc`).
 */
export type CloseWindow = ((wrote?: boolean) => void) & { readonly id: string };

export interface GraphLedger {
  readonly root: string;
  /** The note of an unfinished run on this graph; an unreadable note still counts. */
  runNote(): RunNote | undefined;
  /** The note of a run whose process is gone (not one another live pi session is running right now). */
  abandonedRunNote(): RunNote | undefined;
  /**
   * Notes a run as started and opens its write window. Only OK removes the note; a run that wrote nothing
   * (BUSY, UNAVAILABLE: it never opened the database; SKIPPED: cgc found the graph there and skipped) puts
   * back what was there before it.
   */
  runStarted(what: string): SettleRun;
  /**
   * pi-cgc is about to write this graph (an index, a rebuild, an engine update, its own watcher): the
   * returned function closes the window. An agent directory that cannot be written costs only the record.
   */
  openWriteWindow(): CloseWindow;
  /**
   * Whether a stamp falls in a window of pi-cgc's (open windows of live processes reach to now), but for the
   * window `except` (a run asking about a stamp it found before it wrote).
   */
  writtenByPiCgc(stampMs: number, except?: string): boolean;
  /**
   * Tells pi-cgc's engine that its warm-start cache may no longer be what the graph holds, because something
   * other than the engine wrote the graph (a full index or sync, cgc run by someone else). Its next start then
   * reads the tree from the disk and its first update rewrites every file's links (ADR 0011).
   */
  writtenElsewhere(): void;
  /** The engine's warm-start cache (a folder). */
  readonly engineCacheDir: string;
  /** The engine's parse store (a folder), shared by every graph: a file's parse depends on its content, not its graph. */
  readonly parseStoreDir: string;
  /** The tree the graph was last verified on (the change tracker's snapshot). */
  readonly treeFile: string;
}

/** The ledger of the graph of `root` in the database `env` names. */
export function graphLedger(env: NodeJS.ProcessEnv, root: string): GraphLedger {
  const key = [root, ...DATABASE_VARIABLES.map((name) => env[name] ?? "")].join("\0");
  const name = createHash("sha256").update(key).digest("hex").slice(0, 24);
  const folder = join(agentDir(env), "pi-cgc");
  const runs = join(folder, "runs", `${name}.json`);
  const writes = join(folder, "writes", `${name}.json`);
  const engineCacheDir = join(folder, "engine", name);

  const runNote = (): RunNote | undefined => {
    if (!existsSync(runs)) return undefined;
    try {
      return JSON.parse(readFileSync(runs, "utf8")) as RunNote;
    } catch {
      return { root, what: "index or sync", startedAt: "an unknown time", pid: 0 };
    }
  };
  const openWriteWindow = (): CloseWindow => openWindow(writes);

  return {
    root,
    engineCacheDir,
    parseStoreDir: join(folder, "parse-store"),
    treeFile: join(folder, "trees", `${name}.json`),
    runNote,
    abandonedRunNote() {
      const note = runNote();
      if (note === undefined || note.pid === 0 || note.pid === process.pid) return note;
      // Alive: another session's run in progress, which its own read-back will judge.
      return pidAlive(note.pid) ? undefined : note;
    },
    runStarted(what) {
      const before = runNote();
      const closeWindow = openWriteWindow(); // every pi-cgc write passes here: its stamp is pi-cgc's
      const note: RunNote = { root, what, startedAt: new Date().toISOString(), pid: process.pid };
      try {
        mkdirSync(dirname(runs), { recursive: true });
        writeFileSync(runs, `${JSON.stringify(note)}\n`);
      } catch {
        // An agent directory we cannot write: the in-session state still says possibly stale on a failure.
      }
      const settle = (outcome: string, ranForMs?: number) => {
        // A run that met the lock never opened the database, and an index cgc skipped wrote nothing: a stamp in
        // its time is another writer's.
        const wroteNothing = outcome === "BUSY" || outcome === "UNAVAILABLE" || outcome === "SKIPPED";
        closeWindow(!wroteNothing);
        try {
          if (outcome === "OK" || (wroteNothing && !before)) rmSync(runs, { force: true });
          else if (wroteNothing) writeFileSync(runs, `${JSON.stringify(before)}\n`);
          else if (outcome === "TIMEOUT")
            writeFileSync(runs, `${JSON.stringify({ ...note, timedOutAfterMs: ranForMs })}\n`);
        } catch {
          // as above
        }
      };
      return Object.assign(settle, { windowId: closeWindow.id });
    },
    openWriteWindow,
    writtenByPiCgc: (stampMs, except) => inWindow(writes, stampMs, except),
    writtenElsewhere() {
      try {
        mkdirSync(engineCacheDir, { recursive: true });
        writeFileSync(join(engineCacheDir, ENGINE_WRITTEN_ELSEWHERE), `${new Date().toISOString()}\n`);
      } catch {
        // An agent directory we cannot write holds no cache either.
      }
    },
  };
}

/** Whether a process lives (one of another user's counts: it is there, only not ours to signal). */
export function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

type WindowLine = { id: string; from: number; pid: number } | { id: string; to: number } | { id: string; void: true };
type Window = { from: number; to?: number; pid: number };

/** This process's own windows, by record: they count even when the agent directory cannot be written. */
const ownWindows = new Map<string, Array<Window & { id: string }>>();

function openWindow(path: string): CloseWindow {
  const id = `${process.pid}-${Date.now()}-${Math.random().toString(36).slice(2, 8)}`;
  const append = (line: WindowLine) => {
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

function inWindow(path: string, stampMs: number, except: string | undefined): boolean {
  const windows = new Map<string, Window>((ownWindows.get(path) ?? []).map((window) => [window.id, { ...window }]));
  if (existsSync(path))
    try {
      for (const text of readFileSync(path, "utf8").split("\n")) {
        if (!text) continue;
        const line = JSON.parse(text) as WindowLine;
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
