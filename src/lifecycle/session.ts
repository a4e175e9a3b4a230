// One pi session's pi-cgc, assembled: its config, runner, state, notices and worktree scope, with the
// readiness probe (readiness.ts) and the maintenance runs (maintenance.ts) wired to them. Created on
// session_start (returns at once), disposed on session_shutdown. What changes here: what a session is made
// of (the CgcSession interface) and how its parts are put together.
import { writeSync } from "node:fs";
import type { ExtensionContext } from "@mariozechner/pi-coding-agent";
import type { Backend } from "../cgc/backend.ts";
import { applyOutputPolicy, createSpillDir, type PolicyResult, type SpillDir } from "../cgc/output.ts";
import { createRunner, type Runner, type RunResult } from "../cgc/runner.ts";
import type { Config } from "../config/keys.ts";
import { type LoadedConfig, loadConfig } from "../config/load.ts";
import { type GraphLedger, graphLedger } from "../state/ledger.ts";
import type { ProbeVerdict, RepositoryFacts } from "../state/model.ts";
import { createNoticeLedger, type NoticeLedger } from "../state/notices.ts";
import { createStore, type Store } from "../state/store.ts";
import { type ChangeTracker, createChangeTracker } from "../workspace/tracker.ts";
import { createMaintenance, type Maintenance, type MaintenanceKind, type StoppedRun } from "./maintenance.ts";
import { createGraphProvenance, type GraphProvenance } from "./provenance.ts";
import { createReadiness, type ProbedFacts } from "./readiness.ts";
import { createWorktreeScope, type WorktreeScope } from "./worktree-scope.ts";

export type { MaintenanceKind } from "./maintenance.ts";

export interface SessionOptions {
  env?: NodeJS.ProcessEnv;
}

/** One pi session's pi-cgc. Consumers take the `Pick` of it they use. */
export interface CgcSession {
  /** The environment this session's cgc children and records are keyed by. */
  readonly env: NodeJS.ProcessEnv;
  readonly store: Store;
  readonly tracker: ChangeTracker;
  readonly runner: Runner;
  readonly notices: NoticeLedger;
  readonly spill: SpillDir;
  /** The config of the moment (`reloadConfig` reads it again). */
  config(): Config;
  readonly loaded: LoadedConfig;
  /** The workspace root (the session's cwd until the first probe resolves it). */
  readonly root: string;
  /** The backend the probe detected (undefined before it ran, null when it found none). */
  readonly backend: Backend | null | undefined;
  /** The graph's repositories, from the last probe. */
  readonly repositories: readonly RepositoryFacts[];
  /** What pi-cgc remembers about the session's graph (its root's, at the moment of asking). */
  readonly ledger: GraphLedger;
  /** Worktree isolation: the context this session's cgc calls carry, its state, its record. */
  readonly worktree: WorktreeScope;
  readonly hasUI: boolean;
  /** Runs a call on pi's UI unless the session ended or its context went stale meanwhile. */
  withUi(use: () => void): void;
  readonly disposed: boolean;
  /** Who wrote the graph: the stamps this session saw, against pi-cgc's write windows. */
  readonly provenance: GraphProvenance;
  /** Probe in the background and re-derive readiness. Concurrent requests share one probe. */
  refresh(): Promise<void>;
  /** One maintenance run at a time; readiness is re-derived when it settles, whatever the outcome. */
  runMaintenance(
    kind: MaintenanceKind,
    args: string[],
    what: string,
    estimate?: { ms: number; files: number },
  ): Promise<RunResult>;
  fullIndexThrough: Maintenance["fullIndexThrough"];
  stoppedByBudget(): StoppedRun | undefined;
  readonly maintenanceRunning: boolean;
  /** Subscribe to each settled probe (start-time drift goes to the freshness machinery). */
  onProbe(handler: (verdict: ProbeVerdict) => void): () => void;
  reloadConfig(): void;
  /** Everything cgc printed, through the one output policy, ready to show. */
  present(raw: string): PolicyResult;
  dispose(): Promise<void>;
}

/** The session of the moment: undefined between sessions and after pi replaced one. */
export type CurrentSession = () => CgcSession | undefined;

export function createCgcSession(ctx: ExtensionContext, options: SessionOptions = {}): CgcSession {
  const env = options.env ?? process.env;
  const cwd = ctx.cwd;
  let loaded: LoadedConfig = loadConfig({ cwd, env });
  const config = (): Config => loaded.values;
  const facts: ProbedFacts = { root: cwd, backend: undefined, cgcVersion: undefined, repositories: [] };
  const store = createStore();
  const tracker = createChangeTracker(env);
  const spill = createSpillDir(cwd);
  let disposed = false;
  let ledger = graphLedger(env, facts.root);
  /** The ledger of the graph of the moment: the probe may resolve another root. */
  const currentLedger = (): GraphLedger => {
    if (ledger.root !== facts.root) ledger = graphLedger(env, facts.root);
    return ledger;
  };
  const provenance = createGraphProvenance(currentLedger);

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
  const runner = createRunner({
    executable: config()["cgc.executable"],
    env,
    // Worktree isolation decides, at each spawn, the context every database-backed call carries.
    subcommandArgs: () => worktree.subcommandArgs(),
    serverEnv: () => worktree.serverEnv(),
    databaseRefusal: () => worktree.databaseRefusal(),
    // FalkorDB Lite, or not known yet: pi-cgc's processes of the HOME take turns at its daemon (src/cgc/lite-gate.ts).
    sharedDaemon: () => {
      const name = store.get().facts?.reportedBackend?.name ?? facts.backend?.name;
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

  /** What the session's background work shares. */
  const parts = {
    env,
    runner,
    store,
    tracker,
    notices,
    worktree,
    config,
    ledger: currentLedger,
    disposed: () => disposed,
  };
  const maintenance = createMaintenance({
    ...parts,
    root: () => facts.root,
    backend: () => facts.backend,
    cgcVersion: () => facts.cgcVersion,
    refresh: () => readiness.refresh(),
  });
  const readiness = createReadiness({ ...parts, cwd, provenance, maintenance, facts });

  return {
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
      return facts.root;
    },
    get backend() {
      return facts.backend;
    },
    get repositories() {
      return facts.repositories;
    },
    get ledger() {
      return currentLedger();
    },
    worktree,
    hasUI,
    withUi: ui,
    get disposed() {
      return disposed;
    },
    provenance,
    refresh: readiness.refresh,
    runMaintenance: maintenance.run,
    fullIndexThrough: maintenance.fullIndexThrough,
    stoppedByBudget: maintenance.stoppedByBudget,
    get maintenanceRunning() {
      return maintenance.running;
    },
    onProbe: readiness.onProbe,
    reloadConfig(): void {
      loaded = loadConfig({ cwd, env });
    },
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
