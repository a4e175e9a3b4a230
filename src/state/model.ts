// The one state model: readiness, activity and freshness, changed only by the named transitions below
// (pure functions). Chip, guidance, notes and commands read it; nothing else keeps its own copy.

export type Readiness = "unavailable" | "unindexed" | "indexing" | "ready" | "busy" | "unknown" | "corrupt";
export type Activity = "idle" | "indexing" | "syncing" | "rebuilding" | "updating";
/** Three values, as the chip and the notices name them; "not verified" is possibly-stale plus lastError (ADR 0007). */
export type Freshness = "unknown" | "fresh" | "possibly-stale";

export interface RepositoryFacts {
  path: string;
  name?: string;
  indexedAt?: string;
  commit?: string;
  files?: number;
  functions?: number;
  classes?: number;
  languages?: string[];
}

/** What the readiness probe learned, cached for the coverage note and /cgc status (no re-spawn). */
export interface ProbeFacts {
  cgcVersion?: string;
  backend?: { name: string; source: string };
  /** The backend cgc named on the probe's graph query (`Using database: …`): what the user and the agent are told. */
  reportedBackend?: { name: string; source: string };
  repository?: RepositoryFacts;
  repositoryCount?: number;
  takenAt: number;
  spawns: number;
}

export interface State {
  /** False until the first probe settles: the chip says "checking" rather than guess. */
  probed: boolean;
  readiness: Readiness;
  /** Why readiness is what it is, in one line a user can act on. */
  reason: string;
  activity: Activity;
  activityStartedAt?: number;
  progress?: string;
  /** What the running index was estimated to cost before it started (src/cgc/index-cost.ts). */
  estimate?: { ms: number; files: number };
  freshness: Freshness;
  /** Paths changed since the graph was last verified fresh. */
  changedPaths: string[];
  /** Why the graph is possibly stale beyond its changed paths (an unfinished run, a moved HEAD); cleared when fresh. */
  staleReason?: string;
  /**
   * Why only a full rebuild can make the graph fresh again (another process wrote it: src/lifecycle/provenance.ts).
   * Updating changed paths does not clear it; a completed index, rebuild or sync does.
   */
  rebuildNeeded?: string;
  /**
   * Fresh by a verified watcher's survival, not by a read-back (ADR 0010): `cgc watch` writes each change
   * itself and its updates are not checked against a full index, so the chip says "watched", not "fresh".
   */
  keptByWatcher?: boolean;
  /**
   * A `cgc watch` outside pi-cgc sees this workspace (src/cgc/other-watchers.ts): it may write any change after
   * pi-cgc's read-back, so no change is reconciled while it runs (ADR 0011, "Other writers").
   */
  otherWriter?: string;
  /** Counts possibly-stale episodes opened this session (fresh → possibly-stale). */
  episodes: number;
  lastError?: string;
  verifiedAt?: number;
  facts?: ProbeFacts;
  lastAction?: { what: string; outcome: string; at: number };
  autoSyncs: number;
}

export function initialState(): State {
  return {
    probed: false,
    readiness: "unknown",
    reason: "not probed yet",
    activity: "idle",
    freshness: "unknown",
    changedPaths: [],
    episodes: 0,
    autoSyncs: 0,
  };
}

export type ProbeVerdict = {
  readiness: Exclude<Readiness, "indexing">;
  reason: string;
  facts?: ProbeFacts;
  /** Set when the probe compared the graph's record with the repository. */
  drift?: { changed: boolean; paths: string[]; detail: string };
};

/** A probe settled. Readiness is re-derived from it, except that running work keeps "indexing". */
export function probeSettled(state: State, verdict: ProbeVerdict, now: number): State {
  const facts = verdict.facts ?? state.facts;
  const readiness = state.activity === "indexing" && verdict.readiness === "unindexed" ? "indexing" : verdict.readiness;
  let next: State = { ...state, probed: true, readiness, reason: verdict.reason, facts };
  if (verdict.drift && readiness === "ready") {
    next = verdict.drift.changed
      ? changesObserved(next, verdict.drift.paths, verdict.drift.detail)
      : state.freshness === "possibly-stale"
        ? next
        : { ...next, freshness: "fresh", staleReason: undefined, verifiedAt: now, lastError: undefined };
  }
  return next;
}

export function maintenanceStarted(
  state: State,
  activity: Exclude<Activity, "idle">,
  what: string,
  now: number,
  estimate?: { ms: number; files: number },
): State {
  return {
    ...state,
    activity,
    activityStartedAt: now,
    progress: undefined,
    estimate,
    readiness: activity === "indexing" && state.readiness !== "ready" ? "indexing" : state.readiness,
    lastAction: { what, outcome: "running", at: now },
  };
}

/** A phase of the work under way; `totalMs`: the run's own new estimate of its whole time (pi-cgc's index). */
export function maintenanceProgress(state: State, progress: string, totalMs?: number): State {
  if (state.activity === "idle") return state;
  const estimate = totalMs !== undefined && state.estimate ? { ...state.estimate, ms: totalMs } : state.estimate;
  return { ...state, progress, estimate };
}

/** Outcomes of a run that may have written part of the graph before it ended (cgc has no transaction). */
const MAY_HAVE_WRITTEN = new Set(["FAILED", "TIMEOUT", "CANCELLED"]);

/**
 * Work settled; readiness stays as it was until the follow-up probe re-derives it. A run that ended
 * part-way leaves a graph nobody verified: possibly stale, whatever the probe's dates say. A completed
 * index or rebuild read every file, so the follow-up probe's drift check decides afresh.
 */
export function maintenanceSettled(state: State, outcome: string, now: number, error?: string): State {
  const settled: State = {
    ...state,
    activity: "idle",
    activityStartedAt: undefined,
    progress: undefined,
    estimate: undefined,
    readiness: state.readiness === "indexing" ? "unknown" : state.readiness,
    reason: state.readiness === "indexing" ? "re-checking after indexing" : state.reason,
    // The chip says "checking…" until the follow-up probe settles, not "unknown" for those seconds.
    probed: state.readiness === "indexing" ? false : state.probed,
    lastAction: state.lastAction ? { ...state.lastAction, outcome, at: now } : undefined,
    lastError: error ?? state.lastError,
  };
  if (MAY_HAVE_WRITTEN.has(outcome)) {
    return freshnessNotVerified(settled, error ?? `${state.lastAction?.what ?? state.activity} ended ${outcome}`);
  }
  const rebuilt = outcome === "OK" && (state.activity === "indexing" || state.activity === "rebuilding");
  const wholeGraph = rebuilt || (outcome === "OK" && state.activity === "syncing");
  const cleared = wholeGraph ? { ...settled, rebuildNeeded: undefined } : settled;
  return rebuilt && settled.freshness === "possibly-stale"
    ? { ...cleared, freshness: "unknown", changedPaths: [] }
    : cleared;
}

/**
 * The graph is known wrong in a way no update of changed paths mends (another process wrote it; a rebuild's
 * read-back found its structure broken): possibly stale until a full rebuild is verified.
 */
export function graphNeedsRebuild(state: State, detail: string): State {
  return { ...changesObserved(state, [], detail), staleReason: detail, rebuildNeeded: detail };
}

/** Another process wrote the graph: possibly stale until a full rebuild, whatever paths are reconciled meanwhile. */
export function graphWrittenOutside(state: State, detail: string): State {
  return graphNeedsRebuild(state, detail);
}

/** Files changed since the graph was verified: opens an episode when the graph was fresh (or unverified). */
export function changesObserved(state: State, paths: string[], detail?: string): State {
  if (paths.length === 0 && !detail) return state;
  const changedPaths = [...new Set([...state.changedPaths, ...paths])];
  const opens = state.freshness !== "possibly-stale";
  return {
    ...state,
    freshness: "possibly-stale",
    keptByWatcher: undefined,
    changedPaths,
    staleReason: detail || state.staleReason,
    episodes: opens ? state.episodes + 1 : state.episodes,
  };
}

/**
 * A sync or update was read back from the graph: the episode ends, the changed paths are reconciled. Not while
 * another watcher runs: what was read back may be overwritten by it, so every changed path stays.
 */
export function freshnessVerified(state: State, reconciled: string[], now: number): State {
  if (state.otherWriter) return state;
  const remaining = state.changedPaths.filter((path) => !reconciled.includes(path));
  return remaining.length > 0 || state.rebuildNeeded
    ? { ...state, changedPaths: remaining }
    : {
        ...state,
        freshness: "fresh",
        keptByWatcher: undefined,
        changedPaths: [],
        staleReason: undefined,
        verifiedAt: now,
        lastError: undefined,
      };
}

/**
 * The watchers outside pi-cgc that see this workspace, as last looked for (`detail` names them; undefined: none).
 * Seeing one opens no episode (cgc's watcher writes only the changes it sees happen); it keeps open the one
 * the changes made while it runs open.
 */
export function otherWritersSeen(state: State, detail: string | undefined): State {
  return detail === state.otherWriter ? state : { ...state, otherWriter: detail };
}

/**
 * A watcher survived its liveness window on a graph that was not possibly stale: from now on its writes keep
 * the graph (the seed's fresh record), which nothing reads back (`keptByWatcher`).
 */
export function watcherVerified(state: State, now: number): State {
  if (state.readiness !== "ready" || state.freshness === "possibly-stale") return state;
  const verified = freshnessVerified(state, [], now);
  return verified.freshness === "fresh" ? { ...verified, keptByWatcher: true } : verified;
}

/**
 * A verified watcher died: the error is kept for /cgc status. What changed while it watched is observed by
 * the caller; without a change it wrote nothing, and the graph is what it was when the watcher took it.
 */
export function watcherDied(state: State, error: string): State {
  return { ...state, lastError: error, keptByWatcher: undefined };
}

/** A watcher or sync could not be verified: never fresh; the error is kept for /cgc status. */
export function freshnessNotVerified(state: State, error: string): State {
  return {
    ...state,
    freshness: "possibly-stale",
    keptByWatcher: undefined,
    episodes: state.freshness === "possibly-stale" ? state.episodes : state.episodes + 1,
    lastError: error,
  };
}

export function autoSyncCounted(state: State): State {
  return { ...state, autoSyncs: state.autoSyncs + 1 };
}

/** The readiness predicate (ADR 0002): cgc available and the workspace's index exists or is being built. */
export function isReady(state: State): boolean {
  return state.readiness === "ready" || state.readiness === "indexing";
}
