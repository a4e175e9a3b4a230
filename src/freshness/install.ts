// Freshness (ADR 0007, 0011), wired to pi: drift is observed from the agent's own edits, from what its shell
// commands changed, and from changes made outside pi (checked when each prompt starts). Where pi-cgc's engine
// runs (updates.ts), each burst of changes reaches the graph a moment after it ends, while the agent works;
// elsewhere one budgeted full-rebuild sync runs at a quiet moment after the agent's run (quiet-sync.ts).
// While a verified watcher is alive (watch-start.ts) it keeps the graph and both stand down; while a
// `cgc watch` outside pi-cgc writes, nothing is reconciled (other-writers.ts). What changes here: which pi
// events reach freshness, and how a session's parts are wired at its start.
import { basename, dirname, join, resolve } from "node:path";
import {
  type ExtensionAPI,
  type ExtensionCommandContext,
  isEditToolResult,
  isWriteToolResult,
} from "@mariozechner/pi-coding-agent";
import type { CgcSession } from "../lifecycle/session.ts";
import { changesObserved, isReady } from "../state/model.ts";
import { canonical, isWithin } from "../workspace/root.ts";
import { isTrackedPath } from "../workspace/tree.ts";
import type { PossibleTarget } from "./engine.ts";
import { createOtherWriters } from "./other-writers.ts";
import { createQuietSync, type QuietSyncSession } from "./quiet-sync.ts";
import { createEngineUpdates, type EngineUpdates, type PossibleAnswer, type UpdatingSession } from "./updates.ts";
import { startWatcherLater, type WatchingSession } from "./watch-start.ts";
import type { WatcherController } from "./watcher.ts";

/** What freshness uses of a session. */
export type FreshnessSession = UpdatingSession &
  QuietSyncSession &
  WatchingSession &
  Pick<CgcSession, "onProbe" | "tracker" | "root">;

export function installFreshness(pi: ExtensionAPI, current: () => FreshnessSession | undefined) {
  let watcher: WatcherController | undefined;
  let updates: EngineUpdates | undefined;
  let agentRunning = false;

  const quiet = createQuietSync({ updates: () => updates, watcherActive: () => watcher?.active ?? false });
  /** The changes wait for pi-cgc again: the engine takes them at once, the full rebuild at a quiet moment. */
  const catchUp = (session: FreshnessSession) => {
    updates?.schedule();
    if (!agentRunning) quiet.arm(session);
  };
  const otherWriters = createOtherWriters<FreshnessSession>({ updates: () => updates, catchUp });

  const changed = (session: FreshnessSession, paths: string[]) => {
    if (paths.length === 0) return;
    session.store.apply((state) => changesObserved(state, paths));
    updates?.schedule();
  };

  // While a verified watcher keeps the graph, the tracker does not look: when the watcher dies, its
  // next look reports everything changed since the graph was last verified without it.
  const observe = (session: FreshnessSession, paths: string[]) => {
    if (watcher?.active) return;
    otherWriters.look(session);
    const inside = paths.filter((path) => isWithin(session.root, path) && isTrackedPath(session.root, path));
    session.tracker.observed(inside);
    changed(session, inside);
  };

  const checkFiles = (session: FreshnessSession) => {
    if (watcher?.active) return;
    otherWriters.look(session);
    changed(session, session.tracker.check());
  };

  pi.on("session_start", () => {
    const session = current();
    watcher = undefined;
    updates = undefined;
    otherWriters.stop();
    if (!session) return;
    otherWriters.poll(session, current);
    // An engine that could not make the graph fresh while the agent was idle (the quiet moment after its turn
    // may have passed during the update) leaves it to the full rebuild, which then needs its own quiet moment.
    const sessionUpdates = createEngineUpdates(session, () => {
      if (!agentRunning && current() === session) quiet.arm(session);
    });
    updates = sessionUpdates;
    session.store.subscribe((state, previous) => {
      // A full index or rebuild rewrote the graph from the tree: a running engine must read the tree again.
      const rebuilt = previous.activity !== "idle" && previous.activity !== "updating" && state.activity === "idle";
      if (rebuilt && state.lastAction?.outcome === "OK") sessionUpdates.rebuilt(previous.activityStartedAt);
      if (state.freshness !== "fresh" || previous.freshness === "fresh") return;
      // The tree the graph reflects, remembered at each verified moment for the next session's start.
      session.tracker.remember();
      // The user was told at start that the graph was possibly stale: the last word must not stay that.
      if (session.notices.has("drift-detected"))
        session.notices.once(
          "drift-resolved",
          `The graph of ${session.root} is fresh again: pi-cgc brought it up to date and verified it.`,
        );
    });
    let watchDecided = false;
    session.onProbe((verdict) => {
      if (verdict.drift?.changed && session.config()["lifecycle.syncOnStart"] && !quiet.syncing)
        quiet.maybeAuto(session);
      // The watcher's gate needs the first verdict (auto asks the graph whether the workspace is indexed); the
      // mode is read once, at that verdict.
      if (watchDecided) return;
      watchDecided = true;
      startWatcherLater(session, {
        isCurrent: () => current() === session,
        updates: sessionUpdates,
        started: (started) => {
          watcher = started;
        },
        died: () => catchUp(session),
      });
    });
  });

  pi.on("session_shutdown", async () => {
    quiet.cancel();
    otherWriters.stop();
    await updates?.stop();
  });

  pi.on("tool_result", (event, ctx) => {
    const session = current();
    if (!session || !isReady(session.store.get())) return;
    if (isEditToolResult(event) || isWriteToolResult(event)) {
      const raw = event.input.path;
      if (typeof raw !== "string") return;
      const absolute = resolve(ctx.cwd, raw.replace(/^@/, ""));
      observe(session, [join(canonical(dirname(absolute)), basename(absolute))]);
    } else if (event.toolName === "bash") {
      checkFiles(session);
    }
  });

  pi.on("before_agent_start", () => {
    agentRunning = true;
    quiet.cancel();
    const session = current();
    if (session && isReady(session.store.get())) checkFiles(session);
  });

  pi.on("agent_end", () => {
    agentRunning = false;
    const session = current();
    if (session) quiet.arm(session);
  });

  return {
    /** For a graph tool: wait (bounded) for a pending update; the changed paths still not in the graph. */
    settle: (signal?: AbortSignal): Promise<string[]> => updates?.settle(signal) ?? Promise.resolve([]),
    /** For a graph tool: each target function's possible call sites from the engine, or why they are unknown. */
    possibleCallers: (targets: readonly PossibleTarget[], signal?: AbortSignal): Promise<PossibleAnswer> =>
      updates?.possible(targets, signal) ?? Promise.resolve({ unknown: "pi-cgc is not active in this session" }),
    /** Files pi-cgc wrote into the workspace itself (/cgc report, a project settings save): observed as edits are. */
    written: (paths: string[]): void => {
      const session = current();
      if (session && isReady(session.store.get())) observe(session, paths);
    },
    /** The engine's line in /cgc status. */
    describeEngine: (): string => updates?.describe() ?? "no session",
    /** `/cgc sync`: not budgeted, and ends the episode like an automatic one. */
    async manualSync(_ctx: ExtensionCommandContext): Promise<string> {
      const session = current();
      if (!session) return "pi-cgc is not active.";
      const state = session.store.get();
      if (state.readiness !== "ready") return `Nothing to sync: cgc is ${state.readiness} (${state.reason}).`;
      quiet.cancel();
      checkFiles(session);
      return quiet.sync(session, false);
    },
  };
}
