// The sync: the engine's update where it runs, else one de-duplicated full-rebuild sync (sync.ts, imported on
// the first one), started automatically at a quiet moment after the agent's run and within the session's
// budget (freshness.maxSyncsPerSession; none after a rebuild its time budget stopped), or by /cgc sync, which is
// not budgeted. What changes here: when a sync starts on its own, and what one answers.
import type { CgcSession } from "../lifecycle/session.ts";
import { formatElapsed } from "../state/elapsed.ts";
import { autoSyncCounted } from "../state/model.ts";
import { count } from "../state/words.ts";
import type { SyncingSession } from "./sync.ts";
import type { EngineUpdates } from "./updates.ts";

/** How long the session must stay quiet after a run ends before an automatic sync starts. */
export const QUIET_MS = 1_500;

/** What a sync reads of a session. */
export type QuietSyncSession = SyncingSession & Pick<CgcSession, "config" | "notices" | "stoppedByBudget">;

export interface QuietSync {
  /** The automatic sync waits for a quiet moment after the agent's turn. */
  arm(session: QuietSyncSession): void;
  cancel(): void;
  /** An automatic sync, if one is due now (ready, possibly stale, idle, within the budget). */
  maybeAuto(session: QuietSyncSession): void;
  /** One sync at a time; concurrent requests share it. */
  sync(session: QuietSyncSession, automatic: boolean): Promise<string>;
  readonly syncing: boolean;
}

export interface QuietSyncDeps {
  /** The session's engine updates, when they are wired. */
  updates(): EngineUpdates | undefined;
  /** A verified watcher keeps the graph: no sync is due. */
  watcherActive(): boolean;
}

export function createQuietSync(deps: QuietSyncDeps): QuietSync {
  let quietTimer: NodeJS.Timeout | undefined;
  let syncing: Promise<string> | undefined;

  const cancel = () => {
    if (quietTimer) clearTimeout(quietTimer);
    quietTimer = undefined;
  };

  /**
   * A /cgc sync that joined a run which then met the lock tries once for itself: that run's attempts were made
   * before the user asked, perhaps before the lock went.
   */
  const sync = async (session: QuietSyncSession, automatic: boolean): Promise<string> => {
    const joined = syncing !== undefined;
    const answer = await shared(session, automatic);
    // The run it joined may have settled BUSY before the join (it was still re-probing): the state says so.
    const skipped = session.store.get().lastAction?.outcome === "BUSY";
    return joined && !automatic && skipped && !session.disposed ? shared(session, false) : answer;
  };

  const shared = (session: QuietSyncSession, automatic: boolean): Promise<string> => {
    syncing ??= (async () => {
      const updated = await deps.updates()?.run(!automatic);
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
      return `Synced ${session.root}: the graph reflects ${count(outcome.verified.length, "changed file")}.`;
    })().finally(() => {
      syncing = undefined;
    });
    return syncing;
  };

  const maybeAuto = (session: QuietSyncSession) => {
    const state = session.store.get();
    const config = session.config();
    if (session.disposed || !config["freshness.autoSync"] || deps.watcherActive() || state.otherWriter) return;
    if (state.readiness !== "ready" || state.freshness !== "possibly-stale" || state.activity !== "idle") return;
    // The budget below exists because a full rebuild costs what indexing costs; an engine update does not.
    if (deps.updates()?.ready) return void sync(session, true);
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

  return {
    arm(session) {
      cancel();
      quietTimer = setTimeout(() => maybeAuto(session), QUIET_MS);
      quietTimer.unref();
    },
    cancel,
    maybeAuto,
    sync,
    get syncing() {
      return syncing !== undefined;
    },
  };
}
