import {
  graphLedger
} from "./chunk-F77Q226V.js";
import {
  detectCgcBackend,
  isServerBackend
} from "./chunk-EM356YHV.js";
import {
  changesObserved,
  freshnessNotVerified,
  watcherDied,
  watcherVerified
} from "./chunk-K7T5KA4E.js";
import {
  detectWatchFailure
} from "./chunk-AN223M6Q.js";

// src/freshness/watcher.ts
var controllers = /* @__PURE__ */ new WeakMap();
function watcherOf(session) {
  return controllers.get(session);
}
var WATCHING_LINE = /Monitoring for file changes/;
var realSleep = (ms) => new Promise((resolve) => {
  setTimeout(resolve, ms).unref();
});
function startWatcherIfEnabled(session, seams = {}) {
  const mode = session.config()["freshness.watch"];
  const record = { mode, phase: "off" };
  let finish = () => {
  };
  const finished = new Promise((resolve) => {
    finish = resolve;
  });
  const settle = (phase, detail) => {
    record.phase = phase;
    record.detail = detail;
    finish(record);
    return record;
  };
  const decide = async () => {
    if (mode === "off") return settle("off");
    const root = session.root;
    if (!root) return settle("blocked", "no workspace");
    if (!session.runner || session.store.get().readiness === "unavailable") return settle("blocked", "cgc cannot run");
    if (!(seams.worktreeGate ?? (() => true))(session)) return settle("blocked", "the worktree gate");
    if (mode === "auto") {
      const backend = session.backend !== void 0 ? session.backend : await detect(session, root, seams);
      if (!isServerBackend(backend?.name)) {
        const name = backend ? `${backend.name} (from ${backend.source})` : "unknown";
        session.notices.once(
          "watcher-not-started-embedded",
          `freshness.watch is auto and cgc's backend is ${name}, not a server backend (neo4j, falkordb-remote): no watcher this session; pi-cgc syncs at quiet moments instead. Set freshness.watch to on to run one anyway.`
        );
        return settle("declined-backend", `backend ${name}`);
      }
      if (!session.repositories.some((repo) => repo.path === root)) {
        const state = session.store.get();
        const why = state.readiness === "unindexed" ? "" : ` (cgc is ${state.readiness}: ${state.reason})`;
        session.notices.once(
          "watcher-not-started-unindexed",
          `freshness.watch is auto and the graph holds no index for ${root}${why}: no watcher, so nothing is indexed without your consent. Run /cgc index, then the next session starts the watcher.`
        );
        return settle("declined-unindexed", "the graph holds no index for the workspace");
      }
    }
    if (session.disposed) return settle("stopped");
    return spawnAndVerify(session, root, record, seams, settle);
  };
  const started = decide().catch(
    (error) => (
      // Fail open: whatever went wrong, no watcher and no claim.
      settle("blocked", `the watcher start failed: ${error instanceof Error ? error.message : String(error)}`)
    )
  );
  const controller = {
    record,
    get active() {
      return record.phase === "watching";
    },
    started,
    finished
  };
  controllers.set(session, controller);
  return controller;
}
async function detect(session, root, seams) {
  if (seams.detectBackend) return seams.detectBackend();
  return session.runner ? detectCgcBackend({ runner: session.runner, cwd: root }) : null;
}
async function spawnAndVerify(session, root, record, seams, settle) {
  const runner = session.runner;
  const livenessMs = session.config()["freshness.watcherLivenessMs"];
  let reportsWatching = () => {
  };
  const watching = new Promise((resolve) => {
    reportsWatching = resolve;
  });
  let failure;
  let stderrSinceVerified = [];
  const handle = runner.startLongLived(["watch", root], {
    cwd: root,
    onLine: (line, stream) => {
      if (stream === "stdout" && WATCHING_LINE.test(line)) reportsWatching();
      if (stream !== "stderr" || record.phase !== "watching") return;
      stderrSinceVerified = [...stderrSinceVerified.slice(-200), line];
      const failed = detectWatchFailure(`${stderrSinceVerified.join("\n")}
`);
      if (failed) failedToWrite(failed);
    }
  });
  Object.assign(record, { phase: "verifying", pid: handle.pid, livenessMs, startedAt: Date.now() });
  const closeWindow = graphLedger(session.env, root).openWriteWindow();
  seams.graphWritten?.();
  const failedToWrite = (line) => {
    if (failure) return;
    failure = `cgc watch could not write a change to the graph: ${line}`;
    record.phase = "died";
    const error = failure;
    session.store.apply((state) => freshnessNotVerified(state, error));
    observeChangesSinceVerified(session);
    session.notices.once(
      "watcher-not-verified",
      `${error}. The graph is possibly stale; pi-cgc stopped the watcher and syncs at quiet moments instead.`,
      "warning",
      "failed"
    );
    void handle.stop();
  };
  let exited;
  const exit = handle.exited.then((result) => {
    closeWindow();
    exited = result;
    return result;
  });
  await Promise.race([(seams.sleep ?? realSleep)(livenessMs), exit]);
  if (exited === void 0 && !session.disposed) await Promise.race([watching, exit]);
  const verified = exited === void 0 && !session.disposed;
  if (verified) {
    record.phase = "watching";
    record.verifiedAt = Date.now();
    session.store.apply((current, now) => watcherVerified(current, now));
    session.notices.once(
      "watcher-started",
      `cgc watch is following the changes to ${root} (pid ${handle.pid ?? "?"}, alive after ${livenessMs} ms). Its updates are not checked against a full index (cgc's watcher can leave other files' links wrong after a rename or a changed body), so the chip says "watched", not "fresh".`
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
      session.notices.once(
        "skipped-busy",
        "cgc watch skipped: another cgc process holds the database lock. pi-cgc syncs at quiet moments instead.",
        "warning"
      );
      settle("busy", result.reason);
      return;
    }
    if (!verified) {
      const when = result.durationMs <= livenessMs ? `within its ${livenessMs} ms liveness window` : "before it reported watching for changes";
      const error2 = `cgc watch exited ${when} (${result.code}): ${result.reason}`;
      session.store.apply((state) => freshnessNotVerified(state, error2));
      session.notices.once(
        "watcher-not-verified",
        `${error2}. The graph is possibly stale; pi-cgc syncs at quiet moments instead, and /cgc sync brings it up to date now.`,
        "warning"
      );
      settle("not-verified", error2);
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
function observeChangesSinceVerified(session) {
  const changed = session.tracker.check();
  if (changed.length > 0) session.store.apply((state) => changesObserved(state, changed));
}
function describeWatcher(mode, controller) {
  if (mode === "off" && !controller) return "off";
  if (!controller) return `${mode} \u2014 waiting for the first probe`;
  const { record } = controller;
  const pid = record.pid !== void 0 ? `pid ${record.pid}, ` : "";
  const at = (ms) => ms ? new Date(ms).toISOString() : "?";
  switch (record.phase) {
    case "off":
      return "off";
    case "blocked":
      return `${record.mode} \u2014 not started: ${record.detail}`;
    case "declined-backend":
      return `auto \u2014 not started: ${record.detail} is not a server backend`;
    case "declined-unindexed":
      return `auto \u2014 not started: ${record.detail}`;
    case "verifying":
      return `${record.mode} \u2014 ${pid}started ${at(record.startedAt)}, verifying liveness (${record.livenessMs} ms)`;
    case "watching":
      return `${record.mode} \u2014 ${pid}watching since ${at(record.startedAt)}, alive after ${record.livenessMs} ms`;
    case "not-verified":
    case "busy":
    case "died":
      return `${record.mode} \u2014 ${pid}exited: ${record.detail}; lazy syncs resumed`;
    case "stopped":
      return `${record.mode} \u2014 stopped with the session`;
  }
}

export {
  watcherOf,
  startWatcherIfEnabled,
  describeWatcher
};
