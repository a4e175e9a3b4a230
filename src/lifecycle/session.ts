// One pi session's pi-cgc: config, runner, state, notices and the background work that keeps the
// readiness verdict honest. Created on session_start (returns at once), disposed on session_shutdown.
import { existsSync, writeSync } from "node:fs";
import { join } from "node:path";
import type { ExtensionContext } from "@mariozechner/pi-coding-agent";
import { type Backend, shownBackend } from "../cgc/backend.ts";
import { wholeIndexProgram } from "../cgc/engine-script.ts";
import { UNCONTAINED_REASON, uncontainedCount } from "../cgc/graph-checks.ts";
import { applyOutputPolicy, createSpillDir, type PolicyResult } from "../cgc/output.ts";
import { indexResumed, indexSkipped } from "../cgc/parse.ts";
import { createRunner, type RunResult } from "../cgc/runner.ts";
import type { Config } from "../config/keys.ts";
import { type LoadedConfig, loadConfig } from "../config/load.ts";
import { formatElapsed } from "../state/elapsed.ts";
import {
  type Activity,
  changesObserved,
  freshnessNotVerified,
  graphNeedsRebuild,
  graphWrittenOutside,
  maintenanceProgress,
  maintenanceSettled,
  maintenanceStarted,
  type ProbeVerdict,
  probeSettled,
  type RepositoryFacts,
  type State,
} from "../state/model.ts";
import { createNoticeLedger } from "../state/notices.ts";
import { graphRecordPath } from "../state/records.ts";
import { createStore } from "../state/store.ts";
import { createChangeTracker } from "../workspace/tracker.ts";
import { noteGraphWrittenElsewhere, noteRunStarted, readRunNote } from "./interrupted.ts";
import { probeReadiness } from "./probe.ts";
import { createGraphProvenance } from "./provenance.ts";
import { createWorktreeScope } from "./worktree-scope.ts";

export interface SessionOptions {
  env?: NodeJS.ProcessEnv;
}

export type MaintenanceKind = Exclude<Activity, "idle">;

export function createCgcSession(ctx: ExtensionContext, options: SessionOptions = {}) {
  const env = options.env ?? process.env;
  const cwd = ctx.cwd;
  let loaded: LoadedConfig = loadConfig({ cwd, env });
  const config = (): Config => loaded.values;
  const runner = createRunner({
    executable: config()["cgc.executable"],
    env,
    // Worktree isolation decides, at each spawn, the context every database-backed call carries.
    subcommandArgs: () => worktree.subcommandArgs(),
    serverEnv: () => worktree.serverEnv(),
    databaseRefusal: () => worktree.databaseRefusal(),
    // FalkorDB Lite, or not known yet: pi-cgc's processes of the HOME take turns at its daemon (src/cgc/lite-gate.ts).
    sharedDaemon: () => {
      const name = store.get().facts?.reportedBackend?.name ?? backend?.name;
      return name === undefined || name === "falkordb";
    },
    // Read at each spawn, so a budget changed in the settings applies to the next run.
    budgets: {
      get probe() {
        return config()["timeouts.probeMs"];
      },
      get query() {
        return config()["timeouts.queryMs"];
      },
      get maintenance() {
        return config()["timeouts.maintenanceMs"];
      },
      get longLived() {
        return config()["timeouts.longLivedMs"];
      },
    },
  });
  const store = createStore();
  const tracker = createChangeTracker(env);
  const provenance = createGraphProvenance(env, () => root);
  const spill = createSpillDir(cwd);
  let disposed = false;
  let root = cwd;
  let backend: Backend | null | undefined;
  let cgcVersion: string | undefined;
  let repositories: RepositoryFacts[] = [];
  let probing: Promise<void> | undefined;
  let maintenance: Promise<RunResult> | undefined;
  const driftHandlers = new Set<(verdict: ProbeVerdict) => void>();

  /** UI calls after the session was replaced throw (stale ctx); a renderer must never take pi down. */
  const ui = (use: () => void) => {
    if (disposed) return;
    try {
      use();
    } catch {
      // The context went stale between our check and the call.
    }
  };

  // Read once: every property of a ctx throws after pi replaces the session.
  const hasUI = ctx.hasUI;
  const notices = createNoticeLedger({
    hasUI,
    notify: (message, level) => ui(() => ctx.ui.notify(message, level)),
    stderr: (line) => writeSync(2, `${line}\n`), // synchronous: print mode may exit before a piped write drains
  });
  for (const [index, warning] of loaded.warnings.entries())
    notices.once("config-warning", warning, "warning", String(index));
  // Read once, like the executable: switching graphs inside a running session would mix them.
  const worktree = createWorktreeScope({ cwd, env, mode: config()["worktree.mode"], notices });

  function announce(verdict: ProbeVerdict, previous: State): void {
    const state = store.get();
    switch (state.readiness) {
      case "unavailable":
        if (worktree.state.kind === "refused") return; // the scope's own notice names both worktrees
        notices.once(
          "cgc-unavailable",
          `cgc is not available: ${verdict.reason}. Install it with \`pipx install codegraphcontext\`, or set cgc.executable.`,
          "warning",
        );
        return;
      case "unindexed": {
        const stopped = stoppedByBudget();
        if (stopped) {
          notices.once(
            "unindexed",
            `No complete code graph for ${root}: the last pi-cgc ${stopped.what} was stopped after ` +
              `${formatElapsed(stopped.ranForMs)} by its time budget (timeouts.maintenanceMs) before it finished. ` +
              "Raise timeouts.maintenanceMs, then run /cgc index.",
            "warning",
          );
          return;
        }
        if (!config()["lifecycle.autoCreate"]) {
          const pending = worktree.state.kind === "pending" ? worktree.state.name : undefined;
          notices.once(
            "unindexed",
            pending
              ? `No code graph for ${root} yet: this worktree's CGC named context ${pending} does not exist. Run /cgc index to create it and build the graph, or set lifecycle.autoCreate to true.`
              : `No code graph for ${root} yet. Run /cgc index to build it, or set lifecycle.autoCreate to true.`,
          );
        }
        return;
      }
      case "busy":
        notices.once(
          "busy",
          `cgc is busy: ${verdict.reason}. pi-cgc does not force it; /cgc status re-checks.`,
          "warning",
        );
        return;
      case "unknown":
        notices.once("probe-unknown", `cgc's state is unknown: ${verdict.reason}`, "warning");
        return;
      case "corrupt":
        notices.once("corrupt", `cgc reports a damaged graph: ${verdict.reason}`, "error");
        return;
      case "ready": {
        if (verdict.drift?.changed) {
          notices.once("drift-detected", `The graph of ${root} is possibly stale: ${verdict.drift.detail}.`, "info");
          return;
        }
        const repo = state.facts?.repository;
        const wasIndexing = previous.readiness === "indexing" || previous.lastAction?.what === "index";
        notices.once(
          "indexed",
          `${wasIndexing ? "Indexed" : "cgc ready"}: ${root} — ${repo?.files ?? "?"} files, ${repo?.functions ?? "?"} functions (${shownBackend(state.facts?.reportedBackend, backend)?.name ?? "backend unknown"}).`,
        );
        return;
      }
      case "indexing":
        return;
    }
  }

  /** A graph written by another process since the last probe is possibly stale, whatever its dates say. */
  function withOutsideWrite(verdict: ProbeVerdict): ProbeVerdict {
    if (verdict.readiness !== "ready" && verdict.readiness !== "unindexed") return verdict;
    const repository = verdict.readiness === "ready" ? verdict.facts?.repository : undefined;
    const outside = provenance.check(repository?.indexedAt, repository !== undefined);
    if (!outside) return verdict;
    const detail = [verdict.drift?.changed ? verdict.drift.detail : "", outside].filter(Boolean).join("; ");
    return { ...verdict, drift: { changed: true, paths: verdict.drift?.paths ?? [], detail } };
  }

  /** Probe in the background and re-derive readiness. Concurrent requests share one probe. */
  function refresh(): Promise<void> {
    probing ??= (async () => {
      const scope = await worktree.resolve(runner);
      if (disposed) return;
      const probed = scope.verdict
        ? {
            verdict: scope.verdict,
            root: worktree.root ?? root,
            backend: backend ?? null,
            repositories: [],
            settled: true,
          }
        : await probeReadiness({
            runner,
            cwd,
            env,
            knownBackend: backend,
            knownVersion: cgcVersion,
            noGraph: scope.noGraph,
            fileDrift: tracker.startDrift,
          });
      if (disposed || !probed.settled) return;
      const refused = worktree.refuseServerBackend(probed.backend);
      const outcome = refused ? { ...probed, verdict: refused, repositories: [] } : probed;
      backend = outcome.backend;
      cgcVersion = outcome.verdict.facts?.cgcVersion ?? cgcVersion;
      repositories = outcome.repositories;
      root = outcome.root;
      const previous = store.get();
      const verdict = withOutsideWrite(outcome.verdict);
      const unlinked = await unlinkedOnLite(verdict);
      if (disposed) return;
      store.apply((state, now) => {
        const settled = probeSettled(state, verdict, now);
        return unlinked ? graphNeedsRebuild(settled, UNCONTAINED_REASON(unlinked)) : settled;
      });
      if (unlinked)
        notices.once(
          "index-unverified",
          `The graph of ${root} is possibly stale: ${UNCONTAINED_REASON(unlinked)}.`,
          "warning",
          "start",
        );
      if (verdict !== outcome.verdict) {
        store.apply((state) => graphWrittenOutside(state, verdict.drift?.detail ?? ""));
        noteGraphWrittenElsewhere(env, root);
      }
      announce(verdict, previous);
      if (outcome.verdict.readiness === "unindexed" && config()["lifecycle.autoCreate"] && !stoppedByBudget()) {
        void runMaintenance("indexing", ["index", root], "index");
      }
      for (const handler of driftHandlers) handler(verdict);
    })().finally(() => {
      probing = undefined;
    });
    return probing;
  }

  /** The graph's index time last seen whole on FalkorDB Lite (see unlinkedOnLite). */
  let wholeOnLite: string | undefined;

  /**
   * On FalkorDB Lite, cgc's index after the database's first links nothing to its file (docs/cgc-compat.md), and a
   * graph built so is not what a full index holds: how many functions and classes no file contains, once per index
   * time (a query more at the start of a session on Lite only).
   */
  async function unlinkedOnLite(verdict: ProbeVerdict): Promise<number> {
    const indexedAt = verdict.facts?.repository?.indexedAt;
    if (verdict.readiness !== "ready" || verdict.facts?.reportedBackend?.name !== "falkordb") return 0;
    if (indexedAt !== undefined && indexedAt === wholeOnLite) return 0;
    const unlinked = await uncontainedCount(runner, root);
    if (unlinked.kind !== "ok") return 0; // no fault found: counted again at the next probe (wholeOnLite unset)
    if (unlinked.value === 0) wholeOnLite = indexedAt;
    return unlinked.value;
  }

  /**
   * The last index or sync of this workspace's graph, when its time budget stopped it and the budget has
   * not grown since: an automatic run would meet the same end, so none is started.
   */
  function stoppedByBudget(): { what: string; ranForMs: number } | undefined {
    const note = readRunNote(env, root);
    const ranForMs = note?.timedOutAfterMs;
    if (note === undefined || ranForMs === undefined || ranForMs < config()["timeouts.maintenanceMs"]) return undefined;
    return { what: note.what, ranForMs };
  }

  /** What runs a full index instead of the cgc command itself, if anything (src/cgc/engine-script.ts). */
  function fullIndexThrough() {
    return wholeIndexProgram({
      cgcVersion,
      engineOn: config()["freshness.engine"],
      executable: runner.executable,
      env,
      cacheDir: graphRecordPath(env, root, "engine"),
    });
  }

  /** One maintenance run at a time; readiness is re-derived when it settles, whatever the outcome. */
  function runMaintenance(
    kind: MaintenanceKind,
    args: string[],
    what: string,
    estimate?: { ms: number; files: number },
  ): Promise<RunResult> {
    if (maintenance) return maintenance;
    // A full index reads the tree as it is now: what changed before this moment is in it, what changes from
    // here on is looked at when it settles. The paths are kept until it settles (a skip writes nothing).
    // (A sync looked already, just before it read the paths it will verify.)
    const index = kind === "syncing" ? undefined : tracker.indexStarting(root);
    const before = index?.before ?? [];
    // cgc writes a default .cgcignore into a root that has none and indexes by it: not a change after the run.
    const cgcignore = join(root, ".cgcignore");
    const hadCgcignore = existsSync(cgcignore);
    if (before.length > 0) store.apply((state) => changesObserved(state, before));
    store.apply((state, now) => maintenanceStarted(state, kind, what, now, estimate));
    const settleNote = noteRunStarted(env, root, what); // read by the next probe if this run never settles
    noteGraphWrittenElsewhere(env, root); // the engine's cache no longer describes the graph
    // A worktree without its context gets it here, under the same consent as the index itself.
    const prepared = what === "index" ? worktree.createContext(runner, backend) : Promise.resolve(undefined);
    maintenance = prepared
      .then(
        (failed) =>
          failed ??
          runner.run(args, {
            kind: "maintenance",
            cwd: root,
            through: fullIndexThrough(),
            onLine: (line) => {
              const progress = progressOf(line);
              if (progress) store.apply((state) => maintenanceProgress(state, progress));
            },
          }),
      )
      .then(async (result) => {
        // cgc skips a plain index when it finds the repository's graph already there: nothing was written, so
        // the graph's stamp, however close to this run, is another writer's.
        const plain = result.code === "OK" && args[1] !== "--force";
        const skipped = plain && indexSkipped(result.stdout);
        settleNote(skipped ? "SKIPPED" : result.code, result.durationMs);
        if (disposed) return result;
        if (result.code === "OK" && !hadCgcignore) tracker.observed([cgcignore]);
        // Resumed over a partial graph (an index stopped half-way, by a watcher or another cgc): what that one
        // wrote stays, so the graph is not what a full index builds.
        const resumed = plain ? indexResumed(result.stdout) : undefined;
        // What changed while cgc read the tree: the graph may hold what is gone (a file deleted after cgc read
        // it). Observed in the same step as the settle, so that the engine, told the graph was rebuilt, knows
        // these paths may differ from the disk it reads.
        // (cgc's own new .cgcignore is not such a change: the index read the tree by it.)
        const during =
          result.code === "OK" && !skipped && index
            ? index.changedSince().filter((path) => hadCgcignore || path !== cgcignore)
            : [];
        store.apply((state, now) => {
          const settled = maintenanceSettled(
            state,
            skipped ? "SKIPPED" : result.code,
            now,
            result.code === "OK" ? undefined : `${what}: ${result.reason}`,
          );
          return during.length > 0 ? changesObserved(settled, during, `changed while cgc's ${what} ran`) : settled;
        });
        if (resumed)
          store.apply((state) =>
            graphWrittenOutside(
              state,
              `cgc index resumed a graph another run left unfinished ("${resumed.trim()}") and kept what that run wrote`,
            ),
          );
        if (result.code === "BUSY") {
          notices.once("skipped-busy", `cgc ${what} skipped: another cgc process holds the database lock.`, "warning");
        } else if (result.code !== "OK" && result.code !== "CANCELLED") {
          const message =
            result.code === "TIMEOUT"
              ? `cgc ${what} was stopped after ${formatElapsed(result.durationMs)} by its time budget (timeouts.maintenanceMs)` +
                (what === "sync" ? "; cgc rebuilds from scratch, so the graph may now be incomplete." : ".")
              : `cgc ${what} failed (${result.code}): ${result.reason}`;
          notices.once("index-failed", message, "error", what);
        }
        // An index or rebuild that wrote: is every function and class in a file, as a full index leaves them?
        // (The sync reads the same back with its own checks.)
        if (result.code === "OK" && !skipped && kind !== "syncing") {
          const unlinked = await uncontainedCount(runner, root);
          if (unlinked.kind !== "ok") {
            const reason = `the graph's structure could not be read back after the ${what} (${unlinked.reason})`;
            store.apply((state) => freshnessNotVerified(state, `${what}: ${reason}`));
          } else if (unlinked.value > 0) {
            const reason = UNCONTAINED_REASON(unlinked.value);
            store.apply((state) => freshnessNotVerified(state, `${what}: ${reason}`));
            notices.once("index-unverified", `The graph after cgc ${what} is possibly stale: ${reason}.`, "warning");
          }
        }
        await refresh();
        return result;
      })
      .finally(() => {
        maintenance = undefined;
      });
    return maintenance;
  }

  return {
    /** The environment this session's cgc children and records are keyed by. */
    env,
    store,
    tracker,
    runner,
    notices,
    spill,
    config,
    get loaded() {
      return loaded;
    },
    get root() {
      return root;
    },
    get backend() {
      return backend;
    },
    get repositories() {
      return repositories;
    },
    /** Worktree isolation: the context this session's cgc calls carry, its state, its record. */
    worktree,
    hasUI,
    /** Runs a call on pi's UI unless the session ended or its context went stale meanwhile. */
    withUi: ui,
    get disposed() {
      return disposed;
    },
    /** Who wrote the graph: the stamps this session saw, against pi-cgc's write windows. */
    provenance,
    refresh,
    runMaintenance,
    fullIndexThrough,
    stoppedByBudget,
    get maintenanceRunning() {
      return maintenance !== undefined;
    },
    /** Subscribe to each settled probe (start-time drift goes to the freshness machinery). */
    onProbe(handler: (verdict: ProbeVerdict) => void): () => void {
      driftHandlers.add(handler);
      return () => driftHandlers.delete(handler);
    },
    reloadConfig(): void {
      loaded = loadConfig({ cwd, env });
    },
    /** Everything cgc printed, through the one output policy, ready to show. */
    present(raw: string): PolicyResult {
      return applyOutputPolicy(
        raw,
        { maxBytes: config()["output.maxBytes"], maxLines: config()["output.maxLines"] },
        spill,
      );
    },
    async dispose(): Promise<void> {
      disposed = true;
      await runner.close();
      spill.cleanup();
    },
  };
}

export type CgcSession = ReturnType<typeof createCgcSession>;
/** The session of the moment: undefined between sessions and after pi replaced one. */
export type CurrentSession = () => CgcSession | undefined;

/** cgc prints no progress bar without a TTY; its start, summary and end lines are what there is. */
function progressOf(line: string): string | undefined {
  // cgc 0.6.13 prints no progress through a pipe (its bar needs a terminal): only its phases, named here
  // whole rather than as the cut-off first words of its line.
  const trimmed = line.trim();
  // pi-cgc's own index (engine/pi_cgc_engine/indexer.py) names each phase itself.
  const own = /^pi-cgc index: (.+)$/.exec(trimmed);
  if (own) return own[1];
  if (/^Deleting existing index/i.test(trimmed)) return "deleting the old graph";
  if (/^Starting indexing|^Re-indexing/i.test(trimmed)) return "reading and writing files";
  const scanned = /Total scanned files\s*\|\s*(\d+)/.exec(trimmed);
  if (scanned) return `${scanned[1]} files written`;
  return undefined;
}
