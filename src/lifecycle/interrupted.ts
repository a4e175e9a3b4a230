// A note that a pi-cgc index or sync of a workspace is under way, kept in pi's agent directory (never in
// the workspace, never among CGC's own files). cgc writes the graph without a transaction and records no
// completion, so a run that never settled (pi SIGKILLed, the session replaced mid-sync, a crash) can leave
// a graph that cgc itself would call indexed. The next probe reads a note left behind as start-time drift:
// possibly stale, and synced at start where that is on. Only a run that ended OK removes it.
// A run stopped by its time budget says so in the note: an automatic index or sync that would only run out
// of the same budget again, holding the database all the while, is not started (session.ts stoppedByBudget).
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { graphRecordPath } from "../state/records.ts";
import { openWriteWindow, pidAlive } from "./provenance.ts";

export interface RunNote {
  root: string;
  what: string;
  startedAt: string;
  pid: number;
  /** Set when the run was stopped by its time budget (`timeouts.maintenanceMs`): how long it had run, in ms. */
  timedOutAfterMs?: number;
}

/** The note of an unfinished run on this workspace's graph; an unreadable note still counts. */
export function readRunNote(env: NodeJS.ProcessEnv, root: string): RunNote | undefined {
  const path = graphRecordPath(env, root, "runs");
  if (!existsSync(path)) return undefined;
  try {
    return JSON.parse(readFileSync(path, "utf8")) as RunNote;
  } catch {
    return { root, what: "index or sync", startedAt: "an unknown time", pid: 0 };
  }
}

/** The note of a run whose process is gone (not one another live pi session is running right now). */
export function abandonedRunNote(env: NodeJS.ProcessEnv, root: string): RunNote | undefined {
  const note = readRunNote(env, root);
  if (note === undefined || note.pid === 0 || note.pid === process.pid) return note;
  // Alive: another session's run in progress, which its own read-back will judge.
  return pidAlive(note.pid) ? undefined : note;
}

/**
 * Notes a run as started; the returned function settles it with the run's code (and, for TIMEOUT, how
 * long it ran). Only OK removes the note; a run that wrote nothing (BUSY, UNAVAILABLE: it never opened the
 * database; SKIPPED: cgc found the graph there and skipped) puts back what was there before it.
 */
export function noteRunStarted(
  env: NodeJS.ProcessEnv,
  root: string,
  what: string,
): ((outcome: string, ranForMs?: number) => void) & { readonly windowId: string } {
  const path = graphRecordPath(env, root, "runs");
  const before = readRunNote(env, root);
  const closeWindow = openWriteWindow(env, root); // every pi-cgc write passes here: its stamp is pi-cgc's
  const note: RunNote = { root, what, startedAt: new Date().toISOString(), pid: process.pid };
  try {
    mkdirSync(dirname(path), { recursive: true });
    writeFileSync(path, `${JSON.stringify(note)}\n`);
  } catch {
    // An agent directory we cannot write: the in-session state still says possibly stale on a failure.
  }
  const settle = (outcome: string, ranForMs?: number) => {
    // A run that met the lock never opened the database, and an index cgc skipped wrote nothing: a stamp in
    // its time is another writer's.
    const wroteNothing = outcome === "BUSY" || outcome === "UNAVAILABLE" || outcome === "SKIPPED";
    closeWindow(!wroteNothing);
    try {
      if (outcome === "OK" || (wroteNothing && !before)) rmSync(path, { force: true });
      else if (wroteNothing) writeFileSync(path, `${JSON.stringify(before)}\n`);
      else if (outcome === "TIMEOUT")
        writeFileSync(path, `${JSON.stringify({ ...note, timedOutAfterMs: ranForMs })}\n`);
    } catch {
      // as above
    }
  };
  return Object.assign(settle, { windowId: closeWindow.id });
}

/** The file in the engine's cache folder that the engine (engine/pi_cgc_engine/cache.py) reads as WRITTEN_ELSEWHERE. */
const ENGINE_WRITTEN_ELSEWHERE = "graph-written-elsewhere";

/**
 * Tells pi-cgc's engine that its warm-start cache may no longer be what the graph holds, because something
 * other than the engine wrote the graph (a full index or sync, cgc run by someone else). Its next start then
 * reads the tree from the disk and its first update rewrites every file's links (ADR 0011).
 */
export function noteGraphWrittenElsewhere(env: NodeJS.ProcessEnv, root: string): void {
  try {
    const dir = graphRecordPath(env, root, "engine");
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, ENGINE_WRITTEN_ELSEWHERE), `${new Date().toISOString()}\n`);
  } catch {
    // An agent directory we cannot write holds no cache either.
  }
}
