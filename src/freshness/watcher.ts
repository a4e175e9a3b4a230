// The managed `cgc watch` (ADR 0010). `freshness.watch` is off by default; `on` starts
// it wherever cgc runs; `auto` only on a server backend with a workspace the graph already holds. The
// start is fire-and-forget from the first settled probe, one attempt per session, and the graph is
// recorded fresh only after the watcher has survived `freshness.watcherLivenessMs` — and shown as
// "watched", since nothing checks the watcher's updates against a full index.
import { type Backend, detectCgcBackend, isServerBackend } from "../cgc/backend.ts";
import { detectWatchFailure } from "../cgc/parse.ts";
import type { Runner, RunResult } from "../cgc/runner.ts";
import type { Config, WatchMode } from "../config/keys.ts";
import { graphLedger } from "../state/ledger.ts";
import {
  changesObserved,
  freshnessNotVerified,
  type RepositoryFacts,
  watcherDied,
  watcherVerified,
} from "../state/model.ts";
import type { NoticeLedger } from "../state/notices.ts";
import type { Store } from "../state/store.ts";
import type { ChangeTracker } from "../workspace/tracker.ts";

/** What the watcher needs of a session (CgcSession satisfies it). */
export interface WatcherSession {
  readonly root: string | undefined;
  readonly runner: Pick<Runner, "run" | "startLongLived"> | undefined;
  readonly store: Store;
  readonly notices: NoticeLedger;
  /** The backend the readiness probe detected (undefined when it has not run). */
  readonly backend: Backend | null | undefined;
  /** The graph's repositories, from the readiness probe. */
  readonly repositories: readonly RepositoryFacts[];
  readonly disposed: boolean;
  /** The session's change tracker: it does not look while the watcher keeps the graph. */
  readonly tracker: Pick<ChangeTracker, "check">;
  /** The environment pi-cgc's records are keyed by: the watcher's writes are recorded as pi-cgc's. */
  readonly env: NodeJS.ProcessEnv;
  config(): Config;
}

export interface WatcherSeams {
  /** The liveness window's clock. */
  sleep?: (ms: number) => Promise<void>;
  /** Backend detection when the session holds none yet (default: detectCgcBackend with the session's runner). */
  detectBackend?: () => Promise<Backend | null>;
  /** Whether the workspace may be watched at all (worktree isolation decides; allowed until it does). */
  worktreeGate?: (session: WatcherSession) => boolean;
  /** The watcher was spawned: it writes the graph from now on, behind the engine's back. */
  graphWritten?: () => void;
}

export type WatcherPhase =
  | "off"
  | "blocked" // no workspace, no runnable cgc, or the worktree gate said no
  | "declined-backend" // auto: embedded or unknown backend
  | "declined-unindexed" // auto: the graph holds no index for the workspace
  | "verifying" // spawned, inside the liveness window
  | "watching" // survived the window and still alive
  | "not-verified" // exited inside the window
  | "busy" // exited on the database lock
  | "died" // exited after it was verified
  | "stopped"; // stopped by the session's teardown

export interface WatcherRecord {
  mode: WatchMode;
  phase: WatcherPhase;
  pid?: number;
  detail?: string;
  livenessMs?: number;
  startedAt?: number;
  verifiedAt?: number;
}

export interface WatcherController {
  readonly record: WatcherRecord;
  /** Verified and alive: the lazy path's drift observation and syncs stand down. */
  readonly active: boolean;
  /** Settles once the start has been decided: declined, verified or failed. */
  readonly started: Promise<WatcherRecord>;
  /** Settles when nothing more will happen: declined, or the watcher has exited. */
  readonly finished: Promise<WatcherRecord>;
}

const controllers = new WeakMap<object, WatcherController>();

/** The watcher of a session, if its start was attempted. */
export function watcherOf(session: object): WatcherController | undefined {
  return controllers.get(session);
}

/** The real watcher's line once it watches (test/fixtures/cgc/watch-kuzudb.json). */
const WATCHING_LINE = /Monitoring for file changes/;
const realSleep = (ms: number) =>
  new Promise<void>((resolve) => {
    setTimeout(resolve, ms).unref();
  });

export function startWatcherIfEnabled(session: WatcherSession, seams: WatcherSeams = {}): WatcherController {
  const mode = session.config()["freshness.watch"];
  const record: WatcherRecord = { mode, phase: "off" };
  let finish: (record: WatcherRecord) => void = () => {};
  const finished = new Promise<WatcherRecord>((resolve) => {
    finish = resolve;
  });
  const settle = (phase: WatcherPhase, detail?: string) => {
    record.phase = phase;
    record.detail = detail;
    finish(record);
    return record;
  };

  const decide = async (): Promise<WatcherRecord> => {
    if (mode === "off") return settle("off");
    const root = session.root;
    if (!root) return settle("blocked", "no workspace");
    if (!session.runner || session.store.get().readiness === "unavailable") return settle("blocked", "cgc cannot run");
    if (!(seams.worktreeGate ?? (() => true))(session)) return settle("blocked", "the worktree gate");
    if (mode === "auto") {
      const backend = session.backend !== undefined ? session.backend : await detect(session, root, seams);
      if (!isServerBackend(backend?.name)) {
        const name = backend ? `${backend.name} (from ${backend.source})` : "unknown";
        session.notices.once(
          "watcher-not-started-embedded",
          `freshness.watch is auto and cgc's backend is ${name}, not a server backend (neo4j, falkordb-remote): no watcher this session; pi-cgc syncs at quiet moments instead. Set freshness.watch to on to run one anyway.`,
        );
        return settle("declined-backend", `backend ${name}`);
      }
      if (!session.repositories.some((repo) => repo.path === root)) {
        const state = session.store.get();
        const why = state.readiness === "unindexed" ? "" : ` (cgc is ${state.readiness}: ${state.reason})`;
        session.notices.once(
          "watcher-not-started-unindexed",
          `freshness.watch is auto and the graph holds no index for ${root}${why}: no watcher, so nothing is indexed without your consent. Run /cgc index, then the next session starts the watcher.`,
        );
        return settle("declined-unindexed", "the graph holds no index for the workspace");
      }
    }
    if (session.disposed) return settle("stopped");
    return spawnAndVerify(session, root, record, seams, settle);
  };

  const started = decide().catch((error: unknown) =>
    // Fail open: whatever went wrong, no watcher and no claim.
    settle("blocked", `the watcher start failed: ${error instanceof Error ? error.message : String(error)}`),
  );
  const controller: WatcherController = {
    record,
    get active() {
      return record.phase === "watching";
    },
    started,
    finished,
  };
  controllers.set(session, controller);
  return controller;
}

async function detect(session: WatcherSession, root: string, seams: WatcherSeams): Promise<Backend | null> {
  if (seams.detectBackend) return seams.detectBackend();
  return session.runner ? detectCgcBackend({ runner: session.runner, cwd: root }) : null;
}

async function spawnAndVerify(
  session: WatcherSession,
  root: string,
  record: WatcherRecord,
  seams: WatcherSeams,
  settle: (phase: WatcherPhase, detail?: string) => WatcherRecord,
): Promise<WatcherRecord> {
  const runner = session.runner as Pick<Runner, "startLongLived">;
  const livenessMs = session.config()["freshness.watcherLivenessMs"];
  let reportsWatching: () => void = () => {};
  const watching = new Promise<void>((resolve) => {
    reportsWatching = resolve;
  });
  let failure: string | undefined;
  let stderrSinceVerified: string[] = [];
  const handle = runner.startLongLived(["watch", root], {
    cwd: root,
    onLine: (line, stream) => {
      if (stream === "stdout" && WATCHING_LINE.test(line)) reportsWatching();
      if (stream !== "stderr" || record.phase !== "watching") return;
      stderrSinceVerified = [...stderrSinceVerified.slice(-200), line];
      const failed = detectWatchFailure(`${stderrSinceVerified.join("\n")}\n`);
      if (failed) failedToWrite(failed);
    },
  });
  Object.assign(record, { phase: "verifying", pid: handle.pid, livenessMs, startedAt: Date.now() });
  // Its writes are pi-cgc's for as long as it runs (ADR 0010 says what "fresh" means under it), but not the
  // engine's: the engine's model of the graph is no longer what the graph holds.
  const closeWindow = graphLedger(session.env, root).openWriteWindow();
  seams.graphWritten?.();

  /** cgc watch keeps running when it cannot write a change (a thread's traceback): the graph lags from here. */
  const failedToWrite = (line: string) => {
    if (failure) return;
    failure = `cgc watch could not write a change to the graph: ${line}`;
    record.phase = "died"; // not active from now: the lazy path takes over at once
    const error = failure;
    session.store.apply((state) => freshnessNotVerified(state, error));
    observeChangesSinceVerified(session);
    session.notices.once(
      "watcher-not-verified",
      `${error}. The graph is possibly stale; pi-cgc stopped the watcher and syncs at quiet moments instead.`,
      "warning",
      "failed",
    );
    void handle.stop();
  };

  let exited: RunResult | undefined;
  const exit = handle.exited.then((result) => {
    closeWindow();
    exited = result;
    return result;
  });
  await Promise.race([(seams.sleep ?? realSleep)(livenessMs), exit]);
  // Alive through the window is not enough: a watcher stuck before it watches (a hung open, a long initial
  // scan) must also have said that it is watching.
  if (exited === undefined && !session.disposed) await Promise.race([watching, exit]);
  const verified = exited === undefined && !session.disposed;
  if (verified) {
    record.phase = "watching";
    record.verifiedAt = Date.now();
    // Edits from now on are the watcher's. Drift from before it attached (it watches future changes only)
    // keeps the graph possibly stale until a sync reconciles it.
    session.store.apply((current, now) => watcherVerified(current, now));
    session.notices.once(
      "watcher-started",
      `cgc watch is following the changes to ${root} (pid ${handle.pid ?? "?"}, alive after ${livenessMs} ms). ` +
        "Its updates are not checked against a full index (cgc's watcher can leave other files' links wrong " +
        'after a rename or a changed body), so the chip says "watched", not "fresh".',
    );
  }

  void exit.then((result) => {
    if (failure) {
      settle("died", failure);
      return;
    }
    if (session.disposed || result.code === "CANCELLED") {
      settle("stopped", result.reason);
      return;
    }
    if (result.code === "BUSY") {
      // Unrecorded is no claim: the store is left as it was.
      session.notices.once(
        "skipped-busy",
        "cgc watch skipped: another cgc process holds the database lock. pi-cgc syncs at quiet moments instead.",
        "warning",
      );
      settle("busy", result.reason);
      return;
    }
    if (!verified) {
      const when =
        result.durationMs <= livenessMs
          ? `within its ${livenessMs} ms liveness window`
          : "before it reported watching for changes";
      const error = `cgc watch exited ${when} (${result.code}): ${result.reason}`;
      session.store.apply((state) => freshnessNotVerified(state, error));
      session.notices.once(
        "watcher-not-verified",
        `${error}. The graph is possibly stale; pi-cgc syncs at quiet moments instead, and /cgc sync brings it up to date now.`,
        "warning",
      );
      settle("not-verified", error);
      return;
    }
    const error = `cgc watch stopped (${result.code}): ${result.reason}`;
    session.store.apply((state) => watcherDied(state, error));
    observeChangesSinceVerified(session);
    settle("died", error);
  });

  if (!verified) await exit;
  return record;
}

/** What changed while the graph was the watcher's is not known to be in it: the lazy path takes it from here. */
function observeChangesSinceVerified(session: WatcherSession): void {
  const changed = session.tracker.check();
  if (changed.length > 0) session.store.apply((state) => changesObserved(state, changed));
}

/** One line for /cgc status. */
export function describeWatcher(mode: WatchMode, controller: WatcherController | undefined): string {
  if (mode === "off" && !controller) return "off";
  if (!controller) return `${mode} — waiting for the first probe`;
  const { record } = controller;
  const pid = record.pid !== undefined ? `pid ${record.pid}, ` : "";
  const at = (ms: number | undefined) => (ms ? new Date(ms).toISOString() : "?");
  switch (record.phase) {
    case "off":
      return "off";
    case "blocked":
      return `${record.mode} — not started: ${record.detail}`;
    case "declined-backend":
      return `auto — not started: ${record.detail} is not a server backend`;
    case "declined-unindexed":
      return `auto — not started: ${record.detail}`;
    case "verifying":
      return `${record.mode} — ${pid}started ${at(record.startedAt)}, verifying liveness (${record.livenessMs} ms)`;
    case "watching":
      return `${record.mode} — ${pid}watching since ${at(record.startedAt)}, alive after ${record.livenessMs} ms`;
    case "not-verified":
    case "busy":
    case "died":
      return `${record.mode} — ${pid}exited: ${record.detail}; lazy syncs resumed`;
    case "stopped":
      return `${record.mode} — stopped with the session`;
  }
}
