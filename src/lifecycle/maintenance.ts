// A session's maintenance runs: a full index, a rebuild or a sync's rebuild, one at a time, through pi-cgc's
// own index where it was proven (cgc/engine-script.ts) and cgc's otherwise. A run is noted in the graph's
// ledger while it writes, shows its phases in the state, and re-derives readiness when it settles, whatever
// the outcome. What changes here: how a run starts, settles and is read back.
import { existsSync } from "node:fs";
import { join } from "node:path";
import type { Backend } from "../cgc/backend.ts";
import { wholeIndexProgram } from "../cgc/engine-script.ts";
import { UNCONTAINED_REASON, uncontainedCount } from "../cgc/graph-checks.ts";
import { indexInPart, indexResumed, indexSkipped } from "../cgc/parse.ts";
import type { Runner, RunOptions, RunResult } from "../cgc/runner.ts";
import type { Config } from "../config/keys.ts";
import { formatElapsed } from "../state/elapsed.ts";
import type { GraphLedger } from "../state/ledger.ts";
import {
  type Activity,
  changesObserved,
  freshnessNotVerified,
  graphWrittenOutside,
  maintenanceProgress,
  maintenanceSettled,
  maintenanceStarted,
} from "../state/model.ts";
import type { NoticeLedger } from "../state/notices.ts";
import type { Store } from "../state/store.ts";
import type { ChangeTracker } from "../workspace/tracker.ts";
import type { WorktreeScope } from "./worktree-scope.ts";

export type MaintenanceKind = Exclude<Activity, "idle">;

/** The last index or sync of a graph, stopped by its time budget: what it was and how long it ran. */
export interface StoppedRun {
  what: string;
  ranForMs: number;
}

export interface Maintenance {
  /** One run at a time: a run asked for while one runs is that run. */
  run(
    kind: MaintenanceKind,
    args: string[],
    what: string,
    estimate?: { ms: number; files: number },
  ): Promise<RunResult>;
  readonly running: boolean;
  /** What runs a full index instead of the cgc command itself, if anything (src/cgc/engine-script.ts). */
  fullIndexThrough(): RunOptions["through"];
  /**
   * The last index or sync of this workspace's graph, when its time budget stopped it and the budget has
   * not grown since: an automatic run would meet the same end, so none is started.
   */
  stoppedByBudget(): StoppedRun | undefined;
}

/** What maintenance reads of its session; the getters are read at each use (a probe may change them). */
export interface MaintenanceDeps {
  env: NodeJS.ProcessEnv;
  runner: Runner;
  store: Store;
  tracker: ChangeTracker;
  notices: NoticeLedger;
  worktree: Pick<WorktreeScope, "createContext" | "fromMain">;
  config(): Config;
  root(): string;
  backend(): Backend | null | undefined;
  cgcVersion(): string | undefined;
  ledger(): GraphLedger;
  disposed(): boolean;
  /** The probe that re-derives readiness after each settled run. */
  refresh(): Promise<void>;
}

export function createMaintenance(deps: MaintenanceDeps): Maintenance {
  const { store, notices, runner, tracker } = deps;
  let maintenance: Promise<RunResult> | undefined;

  const stoppedByBudget = (): StoppedRun | undefined => {
    const note = deps.ledger().runNote();
    const ranForMs = note?.timedOutAfterMs;
    if (note === undefined || ranForMs === undefined || ranForMs < deps.config()["timeouts.maintenanceMs"])
      return undefined;
    return { what: note.what, ranForMs };
  };

  const fullIndexThrough = () =>
    wholeIndexProgram({
      cgcVersion: deps.cgcVersion(),
      engineOn: deps.config()["freshness.engine"],
      executable: runner.executable,
      env: deps.env,
      cacheDir: deps.ledger().engineCacheDir,
      parseStore: { dir: deps.ledger().parseStoreDir, mb: deps.config()["engine.parseStoreMb"] },
    });

  /** What an index or rebuild that wrote left: is every function and class in a file, as a full index leaves them? */
  const readBackStructure = async (what: string) => {
    const unlinked = await uncontainedCount(runner, deps.root());
    if (unlinked.kind !== "ok") {
      const reason = `the graph's structure could not be read back after the ${what} (${unlinked.reason})`;
      store.apply((state) => freshnessNotVerified(state, `${what}: ${reason}`));
    } else if (unlinked.value > 0) {
      const reason = UNCONTAINED_REASON(unlinked.value);
      store.apply((state) => freshnessNotVerified(state, `${what}: ${reason}`));
      notices.once("index-unverified", `The graph after cgc ${what} is possibly stale: ${reason}.`, "warning");
    }
  };

  const tellFailure = (result: RunResult, what: string) => {
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
  };

  const run: Maintenance["run"] = (kind, args, what, estimate) => {
    if (maintenance) return maintenance;
    const root = deps.root();
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
    const ledger = deps.ledger();
    const settleNote = ledger.runStarted(what); // read by the next probe if this run never settles
    ledger.writtenElsewhere(); // the engine's cache no longer describes the graph
    // A new worktree's context starts from the main checkout's graph where that one is current (pi-cgc's own
    // index only: engine/pi_cgc_engine/relocate.py, which falls back to the full index on its own).
    const through = fullIndexThrough();
    const main = what === "index" && through ? deps.worktree.fromMain() : undefined;
    const indexArgs =
      main && "root" in main ? [...args, "--from-main", main.root, "--main-cache-dir", main.cacheDir] : args;
    // A worktree without its context gets it here, under the same consent as the index itself.
    const prepared =
      what === "index" ? deps.worktree.createContext(runner, deps.backend()) : Promise.resolve(undefined);
    maintenance = prepared
      .then(
        (failed) =>
          failed ??
          runner.run(indexArgs, {
            kind: "maintenance",
            cwd: root,
            through,
            onLine: (line) => {
              const progress = progressOf(line);
              if (progress) store.apply((state) => maintenanceProgress(state, progress.text, progress.totalMs));
            },
          }),
      )
      .then(async (result) => {
        // cgc skips a plain index when it finds the repository's graph already there: nothing was written, so
        // the graph's stamp, however close to this run, is another writer's.
        const plain = result.code === "OK" && args[1] !== "--force";
        const skipped = plain && indexSkipped(result.stdout);
        settleNote(skipped ? "SKIPPED" : result.code, result.durationMs);
        if (deps.disposed()) return result;
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
        tellFailure(result, what);
        const inPart = result.code === "OK" ? indexInPart(result.stdout) : undefined;
        if (inPart)
          notices.once(
            "index-partial",
            `cgc ${what}: ${inPart}. cgc's own index leaves them the same way: what comes before that docstring, without their links.`,
            "warning",
          );
        // (The sync reads the same back with its own checks.)
        if (result.code === "OK" && !skipped && kind !== "syncing") await readBackStructure(what);
        await deps.refresh();
        return result;
      })
      .finally(() => {
        maintenance = undefined;
      });
    return maintenance;
  };

  return {
    run,
    get running() {
      return maintenance !== undefined;
    },
    fullIndexThrough,
    stoppedByBudget,
  };
}

/**
 * A phase of a full index, and the run's own estimate of its whole time where it gives one. cgc prints no
 * progress bar without a TTY: its start, summary and end lines are what there is.
 */
export function progressOf(line: string): { text: string; totalMs?: number } | undefined {
  // cgc 0.6.13 prints no progress through a pipe (its bar needs a terminal): only its phases, named here
  // whole rather than as the cut-off first words of its line.
  const trimmed = line.trim();
  // pi-cgc's own index (engine/pi_cgc_engine/indexer.py) names each phase itself, and re-estimates from its rate.
  const own = /^pi-cgc index: (.+?)(?: · ~(\d+)s in all)?$/.exec(trimmed);
  if (own) return { text: own[1] as string, ...(own[2] ? { totalMs: Number(own[2]) * 1000 } : {}) };
  if (/^Deleting existing index/i.test(trimmed)) return { text: "deleting the old graph" };
  if (/^Starting indexing|^Re-indexing/i.test(trimmed)) return { text: "reading and writing files" };
  const scanned = /Total scanned files\s*\|\s*(\d+)/.exec(trimmed);
  if (scanned) return { text: `${scanned[1]} files written` };
  return undefined;
}
