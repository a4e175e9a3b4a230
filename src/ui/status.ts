// `/cgc status`: everything pi-cgc knows, from the state and the cached probe facts. Spawns nothing.
import { type Backend, describeBackend } from "../cgc/backend.ts";
import { CONFIG_KEY_NAMES, CONFIG_KEYS, type Config, type ConfigKey } from "../config/keys.ts";
import { describeSource, type Source } from "../config/load.ts";
import { formatElapsed } from "../state/elapsed.ts";
import type { State } from "../state/model.ts";
import { count } from "../state/words.ts";
import { chipText } from "./chip.ts";

export interface StatusInput {
  state: State;
  root: string;
  /** The backend detectCgcBackend found (the watcher's gating). */
  backend: Backend | null | undefined;
  /** The backend cgc named on the probe's own call (src/cgc/backend.ts reportedBackend); preferred for display. */
  reportedBackend?: Backend;
  executable: string;
  maintenanceRunning: boolean;
  /** The managed watcher, one line (src/freshness/watcher.ts describeWatcher). */
  watcher?: string;
  /** pi-cgc's incremental engine, one line (src/freshness/updates.ts describe). */
  engine?: string;
  /** Set when pi-cgc's full index runs cgc's command through its engine script (src/cgc/engine-script.ts). */
  fullIndexThroughEngine?: boolean;
  /** Worktree isolation, one line (src/lifecycle/worktree-scope.ts describe); absent when it has nothing to say. */
  worktree?: string;
  /**
   * On FalkorDB Lite, a TCP port its daemon listens on: the user's FALKORDB_PORT, or the port of a daemon the
   * user's own cgc started (src/cgc/lite-gate.ts describeLiteNetwork); absent while it serves its socket only.
   */
  liteNetwork?: string;
}

export function renderStatus({
  state,
  root,
  backend,
  reportedBackend,
  executable,
  maintenanceRunning,
  watcher,
  engine,
  fullIndexThroughEngine,
  worktree,
  liteNetwork,
}: StatusInput): string {
  const facts = state.facts;
  const repo = facts?.repository;
  const probed = facts
    ? `probe at ${new Date(facts.takenAt).toISOString()} (${facts.spawns} cgc spawns)`
    : "no probe yet";
  const lines = [
    `pi-cgc — ${chipText(state)}`,
    `workspace:  ${root}`,
    ...(worktree ? [`worktree:   ${worktree}`] : []),
    `cgc:        ${executable}${facts?.cgcVersion ? ` (${facts.cgcVersion})` : ""}`,
    `backend:    ${describeBackend(reportedBackend, backend)}`,
    ...(liteNetwork ? [`tcp port:   ${liteNetwork}`] : []),
    `readiness:  ${state.readiness} — ${state.reason}`,
  ];
  if (repo) {
    lines.push(
      `index:      ${repo.files ?? "?"} files, ${repo.functions ?? "?"} functions, ${repo.classes ?? "?"} classes` +
        `${repo.languages?.length ? `; ${repo.languages.join(", ")}` : ""} — from the graph, ${probed}`,
      `indexed:    ${repo.indexedAt ?? "time not recorded"}${repo.commit ? ` at commit ${repo.commit.slice(0, 12)}` : ""} — recorded by cgc`,
    );
  } else if (facts?.repositoryCount !== undefined) {
    lines.push(
      `index:      none for this workspace (${facts.repositoryCount} other repositories in the graph) — ${probed}`,
    );
  }
  const changed = state.changedPaths.length;
  lines.push(
    `freshness:  ${state.freshness}${changed ? ` — ${count(changed, "changed file")} not yet in the graph` : ""}` +
      `${state.freshness === "fresh" && state.keptByWatcher ? ` — ${WATCHED}` : ""}` +
      `${state.freshness === "possibly-stale" && state.staleReason ? ` — ${state.staleReason}` : ""}` +
      `${state.verifiedAt ? `; last verified ${new Date(state.verifiedAt).toISOString()}` : ""}`,
  );
  if (engine) lines.push(`engine:     ${engine}`);
  if (fullIndexThroughEngine) lines.push(`full index: ${THROUGH_ENGINE}`);
  if (watcher) lines.push(`watcher:    ${watcher}`);
  if (state.otherWriter) lines.push(`other writer: ${state.otherWriter}`);
  if (state.lastError) lines.push(`last error: ${state.lastError}`);
  if (state.lastAction) {
    lines.push(
      `last action: ${state.lastAction.what} — ${state.lastAction.outcome} at ${new Date(state.lastAction.at).toISOString()}`,
    );
  }
  lines.push(
    `running:    ${maintenanceRunning ? `${state.activity}${state.progress ? ` (${state.progress})` : ""}${runningFor(state)}` : "nothing"}`,
  );
  return lines.join("\n");
}

/** How pi-cgc's full index runs while the engine may (src/cgc/engine-script.ts, docs/engine.md). */
const THROUGH_ENGINE =
  "pi-cgc's own, by its engine script (cgc's parser and resolution, the graph written in bulk); " +
  "cgc's own index in that script where the engine does not write the graph, around FalkorDB Lite's range index";

/** What "fresh" means while a verified watcher keeps the graph (ADR 0010). */
const WATCHED =
  "watched: kept by cgc watch, whose updates nothing checks against a full index " +
  "(it can leave other files' links wrong after a rename or a changed body)";

/** The headless settings view: every key, its effective value and where it came from. */
export function renderConfigTable(values: Config, sources: Record<ConfigKey, Source>): string {
  const rows = CONFIG_KEY_NAMES.map((name) => {
    const format = CONFIG_KEYS[name].type.format as (value: unknown) => string;
    return `${name.padEnd(30)} ${format(values[name]).padEnd(12)} ${describeSource(sources[name])}`;
  });
  return [`${"key".padEnd(30)} ${"value".padEnd(12)} source`, ...rows].join("\n");
}

/** Elapsed time of the running work, and its estimate when one was made before it started. */
function runningFor(state: State): string {
  if (!state.activityStartedAt) return "";
  const elapsed = formatElapsed(Date.now() - state.activityStartedAt);
  return state.estimate
    ? ` for ${elapsed}, estimated ${formatElapsed(state.estimate.ms)} for ${state.estimate.files} files`
    : ` for ${elapsed}`;
}
