// src/state/model.ts
function initialState() {
  return {
    probed: false,
    readiness: "unknown",
    reason: "not probed yet",
    activity: "idle",
    freshness: "unknown",
    changedPaths: [],
    episodes: 0,
    autoSyncs: 0
  };
}
function probeSettled(state, verdict, now) {
  const facts = verdict.facts ?? state.facts;
  const readiness = state.activity === "indexing" && verdict.readiness === "unindexed" ? "indexing" : verdict.readiness;
  let next = { ...state, probed: true, readiness, reason: verdict.reason, facts };
  if (verdict.drift && readiness === "ready") {
    next = verdict.drift.changed ? changesObserved(next, verdict.drift.paths, verdict.drift.detail) : state.freshness === "possibly-stale" ? next : { ...next, freshness: "fresh", staleReason: void 0, verifiedAt: now, lastError: void 0 };
  }
  return next;
}
function maintenanceStarted(state, activity, what, now, estimate) {
  return {
    ...state,
    activity,
    activityStartedAt: now,
    progress: void 0,
    estimate,
    readiness: activity === "indexing" && state.readiness !== "ready" ? "indexing" : state.readiness,
    lastAction: { what, outcome: "running", at: now }
  };
}
function maintenanceProgress(state, progress, totalMs) {
  if (state.activity === "idle") return state;
  const estimate = totalMs !== void 0 && state.estimate ? { ...state.estimate, ms: totalMs } : state.estimate;
  return { ...state, progress, estimate };
}
var MAY_HAVE_WRITTEN = /* @__PURE__ */ new Set(["FAILED", "TIMEOUT", "CANCELLED"]);
function maintenanceSettled(state, outcome, now, error) {
  const settled = {
    ...state,
    activity: "idle",
    activityStartedAt: void 0,
    progress: void 0,
    estimate: void 0,
    readiness: state.readiness === "indexing" ? "unknown" : state.readiness,
    reason: state.readiness === "indexing" ? "re-checking after indexing" : state.reason,
    // The chip says "checking…" until the follow-up probe settles, not "unknown" for those seconds.
    probed: state.readiness === "indexing" ? false : state.probed,
    lastAction: state.lastAction ? { ...state.lastAction, outcome, at: now } : void 0,
    lastError: error ?? state.lastError
  };
  if (MAY_HAVE_WRITTEN.has(outcome)) {
    return freshnessNotVerified(settled, error ?? `${state.lastAction?.what ?? state.activity} ended ${outcome}`);
  }
  const rebuilt = outcome === "OK" && (state.activity === "indexing" || state.activity === "rebuilding");
  const wholeGraph = rebuilt || outcome === "OK" && state.activity === "syncing";
  const cleared = wholeGraph ? { ...settled, rebuildNeeded: void 0 } : settled;
  return rebuilt && settled.freshness === "possibly-stale" ? { ...cleared, freshness: "unknown", changedPaths: [] } : cleared;
}
function graphNeedsRebuild(state, detail) {
  return { ...changesObserved(state, [], detail), staleReason: detail, rebuildNeeded: detail };
}
function graphWrittenOutside(state, detail) {
  return graphNeedsRebuild(state, detail);
}
function changesObserved(state, paths, detail) {
  if (paths.length === 0 && !detail) return state;
  const changedPaths = [.../* @__PURE__ */ new Set([...state.changedPaths, ...paths])];
  const opens = state.freshness !== "possibly-stale";
  return {
    ...state,
    freshness: "possibly-stale",
    keptByWatcher: void 0,
    changedPaths,
    staleReason: detail || state.staleReason,
    episodes: opens ? state.episodes + 1 : state.episodes
  };
}
function freshnessVerified(state, reconciled, now) {
  if (state.otherWriter) return state;
  const remaining = state.changedPaths.filter((path) => !reconciled.includes(path));
  return remaining.length > 0 || state.rebuildNeeded ? { ...state, changedPaths: remaining } : {
    ...state,
    freshness: "fresh",
    keptByWatcher: void 0,
    changedPaths: [],
    staleReason: void 0,
    verifiedAt: now,
    lastError: void 0
  };
}
function otherWritersSeen(state, detail) {
  return detail === state.otherWriter ? state : { ...state, otherWriter: detail };
}
function watcherVerified(state, now) {
  if (state.readiness !== "ready" || state.freshness === "possibly-stale") return state;
  const verified = freshnessVerified(state, [], now);
  return verified.freshness === "fresh" ? { ...verified, keptByWatcher: true } : verified;
}
function watcherDied(state, error) {
  return { ...state, lastError: error, keptByWatcher: void 0 };
}
function freshnessNotVerified(state, error) {
  return {
    ...state,
    freshness: "possibly-stale",
    keptByWatcher: void 0,
    episodes: state.freshness === "possibly-stale" ? state.episodes : state.episodes + 1,
    lastError: error
  };
}
function autoSyncCounted(state) {
  return { ...state, autoSyncs: state.autoSyncs + 1 };
}
function isReady(state) {
  return state.readiness === "ready" || state.readiness === "indexing";
}

// src/workspace/cgc-config.ts
import { readFileSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
function cgcConfigDir(env, homeDir) {
  return join(homeDir ?? (env.HOME || homedir()), ".codegraphcontext");
}
function cgcDotEnvPath(env, homeDir) {
  return join(cgcConfigDir(env, homeDir), ".env");
}
function readCgcDotEnv(env, homeDir) {
  let text;
  try {
    text = readFileSync(cgcDotEnvPath(env, homeDir), "utf8");
  } catch {
    return {};
  }
  const values = {};
  for (const line of text.split("\n")) {
    const match = /^\s*(?:export\s+)?([A-Za-z_][A-Za-z0-9_]*)\s*=\s*(.*?)\s*$/.exec(line);
    if (!match?.[1]) continue;
    values[match[1]] = (match[2] ?? "").replace(/^(['"])(.*)\1$/, "$2");
  }
  return values;
}

export {
  initialState,
  probeSettled,
  maintenanceStarted,
  maintenanceProgress,
  maintenanceSettled,
  graphNeedsRebuild,
  graphWrittenOutside,
  changesObserved,
  freshnessVerified,
  otherWritersSeen,
  watcherVerified,
  watcherDied,
  freshnessNotVerified,
  autoSyncCounted,
  isReady,
  cgcConfigDir,
  cgcDotEnvPath,
  readCgcDotEnv
};
