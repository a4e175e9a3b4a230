// The start of pi-cgc's managed `cgc watch` (watcher.ts, imported here only when freshness.watch is not off, so
// that pi's start-up does not pay for loading it): at the session's first verdict, once. While it lives it writes
// the graph behind the engine's back; when it dies, what changed while it watched is the lazy path's again.
// What changes here: when the watcher starts and what its start and end tell the rest of freshness.
import type { CgcSession } from "../lifecycle/session.ts";
import type { EngineUpdates } from "./updates.ts";
import type { WatcherController, WatcherSession } from "./watcher.ts";

export type WatchingSession = WatcherSession & Pick<CgcSession, "worktree" | "notices" | "config" | "disposed">;

export interface WatchStartDeps {
  /** Whether the session is still pi's current one. */
  isCurrent(): boolean;
  updates: Pick<EngineUpdates, "writtenElsewhere">;
  started(watcher: WatcherController): void;
  /** The watcher died after it was verified: the changes wait for pi-cgc again. */
  died(): void;
}

/** Loads and starts the watcher unless freshness.watch is off; fails open, as a failed watcher start does. */
export function startWatcherLater(session: WatchingSession, deps: WatchStartDeps): void {
  if (session.config()["freshness.watch"] === "off") return;
  void import("./watcher.ts").then(
    ({ startWatcherIfEnabled }) => {
      if (!deps.isCurrent() || session.disposed) return;
      const watcher = startWatcherIfEnabled(session, {
        worktreeGate: () => session.worktree.allowsWatcher(),
        graphWritten: () => deps.updates.writtenElsewhere("pi-cgc's cgc watch writes the graph now"),
      });
      deps.started(watcher);
      void watcher.finished.then((record) => {
        // What changed while it watched is the lazy path's from now: the engine takes it at once, and
        // where no engine runs, the full rebuild at the next quiet moment.
        if (record.phase !== "died" || !deps.isCurrent() || session.disposed) return;
        deps.died();
      });
    },
    // No watcher and no claim; syncs keep the graph.
    (error: unknown) =>
      session.notices.once(
        "watcher-not-verified",
        `No watcher this session: pi-cgc's watcher could not be loaded (${String(error)}); syncs keep the graph.`,
        "warning",
      ),
  );
}
