// The footer chip (ADR 0004): a pure rendering of the state. It never spawns cgc and never polls;
// while work runs, a one-second tick re-renders the elapsed time from the state alone.
import type { State } from "../state/model.ts";

export const CHIP_KEY = "cgc";

export function chipText(state: State, now = Date.now()): string {
  if (state.activity !== "idle") {
    const elapsed = state.activityStartedAt ? ` ${formatElapsed(now - state.activityStartedAt)}` : "";
    const of = state.estimate ? ` of ~${formatElapsed(state.estimate.ms)} · ${state.estimate.files} files` : "";
    const label = state.activity === "rebuilding" ? "rebuilding…" : `${state.activity}…`;
    const progress = state.progress ? ` · ${state.progress}` : "";
    return `cgc ${label}${elapsed}${of}${progress}`;
  }
  if (!state.probed) return "cgc checking…";
  if (state.readiness !== "ready") return `cgc ${state.readiness}`;
  return `cgc ready${freshnessSuffix(state)}`;
}

function freshnessSuffix(state: State): string {
  switch (state.freshness) {
    case "fresh":
      return " · fresh";
    case "possibly-stale":
      return " · possibly stale";
    case "unknown":
      return "";
  }
}

export function formatElapsed(ms: number): string {
  const seconds = Math.max(0, Math.round(ms / 1000));
  return seconds < 60 ? `${seconds}s` : `${Math.floor(seconds / 60)}m${String(seconds % 60).padStart(2, "0")}s`;
}
