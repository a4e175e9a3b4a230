// The one change tracker of a session: what changed in the source tree since the session last looked —
// created, changed, deleted, renamed or moved either way, restored with old times — whoever changed it
// (the agent's edit/write/bash, an editor outside pi, git). It compares snapshots of stamps
// (tree.ts), never times against a moment. The tree the graph was last verified to reflect is kept
// between sessions, so the next session's start sees deletions and renames made while pi was away.
import { mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { dirname, relative, sep } from "node:path";
import { graphLedger } from "../state/ledger.ts";
import {
  cgcIgnoredDirs,
  changedBetween,
  isIgnoreFile,
  isSourcePath,
  snapshotTree,
  stampPath,
  stampTime,
  type TreeSnapshot,
  touchedAfter,
  walkedByCgc,
} from "./tree.ts";

export interface StartDrift {
  paths: string[];
  /** How the paths were found: against the tree the graph was last verified on, or by file times alone. */
  basis: "remembered tree" | "file times";
}

export interface ChangeTracker {
  /**
   * What changed since the graph was last known to reflect the tree: within a session, since the last
   * look; at a session's first probe, against the tree remembered from the last verified moment, else the
   * files written, renamed or restored after the graph's index time.
   */
  startDrift(root: string, indexedMs: number): StartDrift;
  /** What changed since the last look; the next look starts from here. */
  check(): string[];
  /**
   * A full index is about to read the tree at root: what changed before it (as `check`), and a look for its
   * end that reports every path changed since this moment, the ones the session observed itself included.
   * Where nothing is tracked yet (the first index of a workspace no probe found indexed), tracking starts here.
   */
  indexStarting(root: string): { before: string[]; changedSince: () => string[] };
  /** The session saw these paths change itself (edit/write): reported now, so the next look skips them. */
  observed(paths: readonly string[]): void;
  /** The graph was verified to reflect the tree as last looked at: remember that tree for the next session. */
  remember(): void;
  /** Whether cgc's walk of the root takes a file now (tree.ts, walkedByCgc). */
  walkedByCgc(): (path: string) => boolean;
}

export function createChangeTracker(env: NodeJS.ProcessEnv): ChangeTracker {
  /** The workspace root the first probe resolved; nothing is tracked before it. */
  let root: string | undefined;
  let baseline: TreeSnapshot | undefined;

  const look = (): string[] => {
    if (root === undefined) return [];
    const now = snapshotTree(root, baseline, cgcIgnoredDirs(env));
    const changed = baseline ? changedBetween(baseline, now) : [];
    baseline = now;
    return changed;
  };

  return {
    startDrift(probedRoot, indexedMs) {
      if (baseline && root === probedRoot) return { paths: look(), basis: "remembered tree" };
      root = probedRoot;
      const remembered = readSnapshot(graphLedger(env, root).treeFile);
      const now = snapshotTree(root, remembered?.files, cgcIgnoredDirs(env));
      baseline = now;
      if (remembered) {
        // A tree remembered before the ignore files were tracked says nothing of them: taken as unchanged. One
        // remembered before every indexed file was (only source files outside hidden folders) says nothing of
        // the others: those not touched since the index are taken as unchanged.
        for (const [path, stamp] of now) {
          const unknown = isIgnoreFile(root, path)
            ? remembered.tracked < 1
            : remembered.tracked < 2 && !trackedBefore(root, path) && stampTime(stamp) <= indexedMs;
          if (unknown) remembered.files.set(path, stamp);
        }
        return { paths: changedBetween(remembered.files, now), basis: "remembered tree" };
      }
      return { paths: Number.isNaN(indexedMs) ? [] : touchedAfter(now, indexedMs), basis: "file times" };
    },
    check: look,
    indexStarting(at) {
      let before: string[] = [];
      if (root === undefined) {
        root = at;
        baseline = snapshotTree(root, undefined, cgcIgnoredDirs(env));
      } else {
        before = look();
      }
      // A copy: `observed` updates the baseline in place, and what it observes is part of the answer.
      const start = baseline && new Map(baseline);
      const tracked = root;
      return {
        before,
        changedSince: () => {
          if (root !== tracked || !start) return [];
          look();
          return baseline ? changedBetween(start, baseline) : [];
        },
      };
    },
    walkedByCgc: () => (root === undefined ? () => false : walkedByCgc(root, cgcIgnoredDirs(env))),
    observed(paths) {
      if (!baseline) return;
      for (const path of paths) {
        const stamp = stampPath(path, baseline.get(path));
        if (stamp === undefined) baseline.delete(path);
        else baseline.set(path, stamp);
      }
    },
    remember() {
      if (!baseline || root === undefined) return;
      const path = graphLedger(env, root).treeFile;
      try {
        mkdirSync(dirname(path), { recursive: true });
        writeFileSync(`${path}.tmp`, JSON.stringify({ root, tracked: TRACKED, files: [...baseline] }));
        renameSync(`${path}.tmp`, path); // a reader never sees half a record
      } catch {
        // An agent directory we cannot write: the next session falls back to file times.
      }
    },
  };
}

/**
 * What a remembered tree tracked: 0, source files outside hidden folders; 1, also the root's ignore files
 * (`ignoreFiles: true`); 2, every file cgc may index (tree.ts).
 */
const TRACKED = 2;

/** What the tracker tracked before every indexed file was: source files (any case) outside hidden folders. */
function trackedBefore(root: string, path: string): boolean {
  return (
    isSourcePath(path.toLowerCase()) &&
    !relative(root, path)
      .split(sep)
      .some((part) => part.startsWith("."))
  );
}

/** The remembered tree, and what it tracked (TRACKED). */
function readSnapshot(path: string): { files: TreeSnapshot; tracked: number } | undefined {
  try {
    const record = JSON.parse(readFileSync(path, "utf8")) as {
      files?: unknown;
      ignoreFiles?: unknown;
      tracked?: unknown;
    };
    if (!Array.isArray(record.files)) return undefined;
    const tracked = typeof record.tracked === "number" ? record.tracked : record.ignoreFiles === true ? 1 : 0;
    return { files: new Map(record.files as Array<[string, string]>), tracked };
  } catch {
    return undefined;
  }
}
