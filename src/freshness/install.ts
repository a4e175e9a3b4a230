// Freshness (ADR 0007, 0011): drift is observed from the agent's own edits, from what its shell commands
// changed, and from changes made outside pi (checked when each prompt starts). Where pi-cgc's engine runs
// (updates.ts), each burst of changes reaches the graph a moment after it ends, while the agent works;
// elsewhere one de-duplicated, budgeted full-rebuild sync runs at a quiet moment — when the agent's run
// has ended. While a verified watcher is alive (watcher.ts) it keeps the graph and both stand down.
// The full-rebuild sync (sync.ts) and the watcher are imported when first needed (a sync; a first verdict
// with freshness.watch not off): pi's start-up does not pay for loading them.
import { basename, dirname, join, resolve } from "node:path";
import {
  type ExtensionAPI,
  type ExtensionCommandContext,
  isEditToolResult,
  isWriteToolResult,
} from "@mariozechner/pi-coding-agent";
import { describeOtherWatchers, otherWatchersOf } from "../cgc/other-watchers.ts";
import type { CgcSession, CurrentSession } from "../lifecycle/session.ts";
import { formatElapsed } from "../state/elapsed.ts";
import { autoSyncCounted, changesObserved, isReady, otherWritersSeen } from "../state/model.ts";
import { canonical, isWithin } from "../workspace/root.ts";
import { isTrackedPath } from "../workspace/tree.ts";
import { createEngineUpdates, type EngineUpdates } from "./updates.ts";
import type { WatcherController } from "./watcher.ts";

/** How long the session must stay quiet after a run ends before an automatic sync starts. */
export const QUIET_MS = 1_500;
/**
 * How often a session looks for a `cgc watch` outside pi-cgc (about a millisecond a look), besides each change it
 * observes: one that lives longer than this between two turns is seen even if no change shows while it runs.
 */
export const OTHER_WATCHERS_EVERY_MS = 3_000;

export function installFreshness(pi: ExtensionAPI, current: CurrentSession) {
  let quietTimer: NodeJS.Timeout | undefined;
  let syncing: Promise<string> | undefined;
  let watcher: WatcherController | undefined;
  let updates: EngineUpdates | undefined;
  let agentRunning = false;
  let otherWatchersPoll: NodeJS.Timeout | undefined;

  // While a verified watcher keeps the graph, the tracker does not look: when the watcher dies, its
  // next look reports everything changed since the graph was last verified without it.
  const observe = (session: CgcSession, paths: string[]) => {
    if (watcher?.active) return;
    lookForOtherWatchers(session);
    const inside = paths.filter((path) => isWithin(session.root, path) && isTrackedPath(session.root, path));
    session.tracker.observed(inside);
    changed(session, inside);
  };

  const checkFiles = (session: CgcSession) => {
    if (watcher?.active) return;
    lookForOtherWatchers(session);
    changed(session, session.tracker.check());
  };

  /**
   * A `cgc watch` outside pi-cgc may write any change it sees after pi-cgc's read-back, and what it writes differs
   * from a full index: while one runs no change is reconciled (the state's `otherWriter`). Once it is gone, the
   * engine's model is not the graph's: the engine starts again untrusted and its update rewrites every file's
   * links; where no engine runs, the full rebuild takes the changes.
   */
  const lookForOtherWatchers = (session: CgcSession) => {
    const found = otherWatchersOf(session.root);
    const before = session.store.get().otherWriter;
    session.store.apply((state) =>
      otherWritersSeen(state, found.length > 0 ? describeOtherWatchers(found) : undefined),
    );
    if (!before || found.length > 0) return;
    updates?.writtenElsewhere("a cgc watch outside pi-cgc wrote the graph");
    if (session.store.get().freshness !== "possibly-stale") return;
    updates?.schedule();
    if (!agentRunning) armQuietSync(session);
  };

  const changed = (session: CgcSession, paths: string[]) => {
    if (paths.length === 0) return;
    session.store.apply((state) => changesObserved(state, paths));
    updates?.schedule();
  };

  const cancelQuietSync = () => {
    if (quietTimer) clearTimeout(quietTimer);
    quietTimer = undefined;
  };

  /** The automatic sync waits for a quiet moment after the agent's turn. */
  const armQuietSync = (session: CgcSession) => {
    cancelQuietSync();
    quietTimer = setTimeout(() => maybeAutoSync(session), QUIET_MS);
    quietTimer.unref();
  };

  /**
   * One sync at a time; concurrent requests share it. A /cgc sync that joined a run which then met the lock
   * tries once for itself: that run's attempts were made before the user asked, perhaps before the lock went.
   */
  const sync = async (session: CgcSession, automatic: boolean): Promise<string> => {
    const joined = syncing !== undefined;
    const answer = await shared(session, automatic);
    // The run it joined may have settled BUSY before the join (it was still re-probing): the state says so.
    const skipped = session.store.get().lastAction?.outcome === "BUSY";
    return joined && !automatic && skipped && !session.disposed ? shared(session, false) : answer;
  };

  const shared = (session: CgcSession, automatic: boolean): Promise<string> => {
    syncing ??= (async () => {
      const updated = await updates?.run(!automatic);
      if (updated !== undefined) return updated;
      const { readiness, reason, otherWriter } = session.store.get();
      // Asked while the graph was ready, it may be gone by now (an update found it deleted): not indexed unasked.
      if (readiness === "unindexed") return `Nothing to sync: cgc is unindexed (${reason}).`;
      // A full rebuild would be overwritten by it as well, and takes minutes where the engine takes a second.
      if (otherWriter) return `Not synced: ${otherWriter}.`;
      if (automatic) session.store.apply(autoSyncCounted);
      const { syncAndVerify } = await import("./sync.ts");
      const outcome = await syncAndVerify(session);
      if (outcome.result.code !== "OK") return `Sync ended ${outcome.result.code}: ${outcome.result.reason}`;
      if (outcome.unverified) {
        if (!automatic) return `Synced ${session.root}, but ${outcome.unverified}; the graph stays possibly stale.`;
        session.notices.once(
          "sync-failed",
          `The graph could not be verified after a sync: ${outcome.unverified}.`,
          "warning",
        );
        return outcome.unverified;
      }
      return `Synced ${session.root}: the graph reflects ${outcome.verified.length} changed file(s).`;
    })().finally(() => {
      syncing = undefined;
    });
    return syncing;
  };

  const maybeAutoSync = (session: CgcSession) => {
    const state = session.store.get();
    const config = session.config();
    if (session.disposed || !config["freshness.autoSync"] || watcher?.active || state.otherWriter) return;
    if (state.readiness !== "ready" || state.freshness !== "possibly-stale" || state.activity !== "idle") return;
    // The budget below exists because a full rebuild costs what indexing costs; an engine update does not.
    if (updates?.ready) return void sync(session, true);
    if (state.autoSyncs >= config["freshness.maxSyncsPerSession"]) {
      session.notices.once(
        "sync-budget-spent",
        `pi-cgc made its ${config["freshness.maxSyncsPerSession"]} automatic syncs for this session; the graph stays possibly stale until /cgc sync.`,
      );
      return;
    }
    // A rebuild that ran out of its time budget would only hold the database until the same budget stops
    // it again (and cgc deletes the old graph first): the user decides.
    const stopped = session.stoppedByBudget();
    if (stopped) {
      session.notices.once(
        "budget-exceeded",
        `pi-cgc is not syncing ${session.root} automatically: its last ${stopped.what} was stopped after ` +
          `${formatElapsed(stopped.ranForMs)} by its time budget (timeouts.maintenanceMs). The graph stays possibly ` +
          "stale; raise timeouts.maintenanceMs and run /cgc sync, or keep it fresh with a watcher (freshness.watch) on a server backend.",
        "warning",
      );
      return;
    }
    void sync(session, true);
  };

  pi.on("session_start", () => {
    const session = current();
    watcher = undefined;
    updates = undefined;
    clearInterval(otherWatchersPoll);
    if (!session) return;
    otherWatchersPoll = setInterval(() => {
      if (current() === session && !session.disposed && isReady(session.store.get())) lookForOtherWatchers(session);
    }, OTHER_WATCHERS_EVERY_MS);
    otherWatchersPoll.unref();
    let watchDecided = false;
    // An engine that could not make the graph fresh while the agent was idle (the quiet moment after its turn
    // may have passed during the update) leaves it to the full rebuild, which then needs its own quiet moment.
    const sessionUpdates = createEngineUpdates(session, () => {
      if (!agentRunning && current() === session) armQuietSync(session);
    });
    updates = sessionUpdates;
    session.store.subscribe((state, previous) => {
      // A full index or rebuild rewrote the graph from the tree: a running engine must read the tree again.
      const rebuilt = previous.activity !== "idle" && previous.activity !== "updating" && state.activity === "idle";
      if (rebuilt && state.lastAction?.outcome === "OK") sessionUpdates.rebuilt();
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
    session.onProbe((verdict) => {
      if (verdict.drift?.changed && session.config()["lifecycle.syncOnStart"] && !syncing) maybeAutoSync(session);
      // The watcher's gate needs the first verdict (auto asks the graph whether the workspace is indexed); the
      // mode is read once, at that verdict.
      if (watchDecided) return;
      watchDecided = true;
      if (session.config()["freshness.watch"] === "off") return;
      void import("./watcher.ts").then(
        ({ startWatcherIfEnabled }) => {
          if (current() !== session || session.disposed) return;
          watcher = startWatcherIfEnabled(session, {
            worktreeGate: () => session.worktree.allowsWatcher(),
            graphWritten: () => sessionUpdates.writtenElsewhere("pi-cgc's cgc watch writes the graph now"),
          });
          void watcher.finished.then((record) => {
            // What changed while it watched is the lazy path's from now: the engine takes it at once, and
            // where no engine runs, the full rebuild at the next quiet moment.
            if (record.phase !== "died" || current() !== session || session.disposed) return;
            sessionUpdates.schedule();
            if (!agentRunning) armQuietSync(session);
          });
        },
        // Fail open, as a failed watcher start does: no watcher and no claim; syncs keep the graph.
        (error: unknown) =>
          session.notices.once(
            "watcher-not-verified",
            `No watcher this session: pi-cgc's watcher could not be loaded (${String(error)}); syncs keep the graph.`,
            "warning",
          ),
      );
    });
  });

  pi.on("session_shutdown", async () => {
    cancelQuietSync();
    clearInterval(otherWatchersPoll);
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
    cancelQuietSync();
    const session = current();
    if (session && isReady(session.store.get())) checkFiles(session);
  });

  pi.on("agent_end", () => {
    agentRunning = false;
    const session = current();
    if (session) armQuietSync(session);
  });

  return {
    /** For a graph tool: wait (bounded) for a pending update; the changed paths still not in the graph. */
    settle: (signal?: AbortSignal): Promise<string[]> => updates?.settle(signal) ?? Promise.resolve([]),
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
      cancelQuietSync();
      checkFiles(session);
      return sync(session, false);
    },
  };
}
