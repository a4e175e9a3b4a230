// Other writers: a `cgc watch` outside pi-cgc may write any change it sees after pi-cgc's read-back, and what it
// writes differs from a full index, so while one runs no change is reconciled (the state's `otherWriter`). A
// session looks for one at each change it observes and on a timer while the graph is ready. Once it is gone,
// the engine's model is not the graph's: the engine starts again untrusted and its update rewrites every
// file's links; where no engine runs, the full rebuild takes the changes. What changes here: how other
// writers are found and what their end sets off.
import { describeOtherWatchers, otherWatchersOf } from "../cgc/other-watchers.ts";
import type { CgcSession } from "../lifecycle/session.ts";
import { isReady, otherWritersSeen } from "../state/model.ts";
import type { EngineUpdates } from "./updates.ts";

/**
 * How often a session looks for a `cgc watch` outside pi-cgc (about a millisecond a look), besides each change it
 * observes: one that lives longer than this between two turns is seen even if no change shows while it runs.
 */
export const OTHER_WATCHERS_EVERY_MS = 3_000;

export type OtherWritersSession = Pick<CgcSession, "root" | "store" | "disposed">;

export interface OtherWriters<S extends OtherWritersSession> {
  /** Looks now (about a millisecond). */
  look(session: S): void;
  /** Looks every OTHER_WATCHERS_EVERY_MS while `session` is the current one and ready; replaces an earlier poll. */
  poll(session: S, current: () => unknown): void;
  stop(): void;
}

export interface OtherWritersDeps<S> {
  updates(): EngineUpdates | undefined;
  /** The other writer is gone and the graph is possibly stale: the changes wait for pi-cgc again. */
  catchUp(session: S): void;
}

export function createOtherWriters<S extends OtherWritersSession>(deps: OtherWritersDeps<S>): OtherWriters<S> {
  let timer: NodeJS.Timeout | undefined;

  const look = (session: S) => {
    const found = otherWatchersOf(session.root);
    const before = session.store.get().otherWriter;
    session.store.apply((state) =>
      otherWritersSeen(state, found.length > 0 ? describeOtherWatchers(found) : undefined),
    );
    if (!before || found.length > 0) return;
    deps.updates()?.writtenElsewhere("a cgc watch outside pi-cgc wrote the graph");
    if (session.store.get().freshness !== "possibly-stale") return;
    deps.catchUp(session);
  };

  const stop = () => clearInterval(timer);

  return {
    look,
    poll(session, current) {
      stop();
      timer = setInterval(() => {
        if (current() === session && !session.disposed && isReady(session.store.get())) look(session);
      }, OTHER_WATCHERS_EVERY_MS);
      timer.unref();
    },
    stop,
  };
}
