// The readiness verdict, re-derived in the background: at session start, after every settled maintenance run,
// when /cgc asks. One probe at a time (concurrent requests share it), through the worktree's scope; a graph
// written by another process since the last probe is possibly stale (provenance.ts), and on FalkorDB Lite a
// graph whose functions and classes no file contains is not what a full index holds. Its verdict is applied to
// the state, announced once (announce.ts), and handed to subscribers (start-time drift goes to freshness).
// What changes here: how a probe's outcome becomes the session's verdict.
import type { Backend } from "../cgc/backend.ts";
import { UNCONTAINED_REASON, uncontainedCount } from "../cgc/graph-checks.ts";
import type { Runner } from "../cgc/runner.ts";
import type { Config } from "../config/keys.ts";
import type { GraphLedger } from "../state/ledger.ts";
import {
  graphNeedsRebuild,
  graphWrittenOutside,
  type ProbeVerdict,
  probeSettled,
  type RepositoryFacts,
} from "../state/model.ts";
import type { NoticeLedger } from "../state/notices.ts";
import type { Store } from "../state/store.ts";
import type { ChangeTracker } from "../workspace/tracker.ts";
import { verdictNotice } from "./announce.ts";
import type { Maintenance } from "./maintenance.ts";
import { probeReadiness } from "./probe.ts";
import type { GraphProvenance } from "./provenance.ts";
import type { WorktreeScope } from "./worktree-scope.ts";

/** What the probes found: the rest of the session reads it; only a settled probe writes it. */
export interface ProbedFacts {
  root: string;
  backend: Backend | null | undefined;
  cgcVersion: string | undefined;
  repositories: RepositoryFacts[];
}

export interface ReadinessDeps {
  cwd: string;
  env: NodeJS.ProcessEnv;
  runner: Runner;
  store: Store;
  tracker: Pick<ChangeTracker, "startDrift">;
  notices: NoticeLedger;
  worktree: Pick<WorktreeScope, "resolve" | "root" | "refuseServerBackend" | "state">;
  provenance: Pick<GraphProvenance, "check">;
  maintenance: Pick<Maintenance, "run" | "stoppedByBudget">;
  facts: ProbedFacts;
  config(): Config;
  ledger(): GraphLedger;
  disposed(): boolean;
}

export interface Readiness {
  /** Probe in the background and re-derive readiness. Concurrent requests share one probe. */
  refresh(): Promise<void>;
  /** Subscribe to each settled probe's verdict. */
  onProbe(handler: (verdict: ProbeVerdict) => void): () => void;
}

export function createReadiness(deps: ReadinessDeps): Readiness {
  const { runner, store, notices, worktree, facts } = deps;
  const handlers = new Set<(verdict: ProbeVerdict) => void>();
  let probing: Promise<void> | undefined;
  /** The graph's index time last seen whole on FalkorDB Lite (see unlinkedOnLite). */
  let wholeOnLite: string | undefined;

  /** A graph written by another process since the last probe is possibly stale, whatever its dates say. */
  const withOutsideWrite = (verdict: ProbeVerdict): ProbeVerdict => {
    if (verdict.readiness !== "ready" && verdict.readiness !== "unindexed") return verdict;
    const repository = verdict.readiness === "ready" ? verdict.facts?.repository : undefined;
    const outside = deps.provenance.check(repository?.indexedAt, repository !== undefined);
    if (!outside) return verdict;
    const detail = [verdict.drift?.changed ? verdict.drift.detail : "", outside].filter(Boolean).join("; ");
    return { ...verdict, drift: { changed: true, paths: verdict.drift?.paths ?? [], detail } };
  };

  /**
   * On FalkorDB Lite, cgc's index after the database's first links nothing to its file (docs/cgc-compat.md), and a
   * graph built so is not what a full index holds: how many functions and classes no file contains, once per index
   * time (a query more at the start of a session on Lite only).
   */
  const unlinkedOnLite = async (verdict: ProbeVerdict): Promise<number> => {
    const indexedAt = verdict.facts?.repository?.indexedAt;
    if (verdict.readiness !== "ready" || verdict.facts?.reportedBackend?.name !== "falkordb") return 0;
    if (indexedAt !== undefined && indexedAt === wholeOnLite) return 0;
    const unlinked = await uncontainedCount(runner, facts.root);
    if (unlinked.kind !== "ok") return 0; // no fault found: counted again at the next probe (wholeOnLite unset)
    if (unlinked.value === 0) wholeOnLite = indexedAt;
    return unlinked.value;
  };

  const probe = async () => {
    const scope = await worktree.resolve(runner);
    if (deps.disposed()) return;
    const probed = scope.verdict
      ? {
          verdict: scope.verdict,
          root: worktree.root ?? facts.root,
          backend: facts.backend ?? null,
          repositories: [],
          settled: true,
        }
      : await probeReadiness({
          runner,
          cwd: deps.cwd,
          env: deps.env,
          knownBackend: facts.backend,
          knownVersion: facts.cgcVersion,
          noGraph: scope.noGraph,
          fileDrift: deps.tracker.startDrift,
        });
    if (deps.disposed() || !probed.settled) return;
    const refused = worktree.refuseServerBackend(probed.backend);
    const outcome = refused ? { ...probed, verdict: refused, repositories: [] } : probed;
    facts.backend = outcome.backend;
    facts.cgcVersion = outcome.verdict.facts?.cgcVersion ?? facts.cgcVersion;
    facts.repositories = outcome.repositories;
    facts.root = outcome.root;
    const previous = store.get();
    const verdict = withOutsideWrite(outcome.verdict);
    const unlinked = await unlinkedOnLite(verdict);
    if (deps.disposed()) return;
    store.apply((state, now) => {
      const settled = probeSettled(state, verdict, now);
      return unlinked ? graphNeedsRebuild(settled, UNCONTAINED_REASON(unlinked)) : settled;
    });
    if (unlinked)
      notices.once(
        "index-unverified",
        `The graph of ${facts.root} is possibly stale: ${UNCONTAINED_REASON(unlinked)}.`,
        "warning",
        "start",
      );
    if (verdict !== outcome.verdict) {
      store.apply((state) => graphWrittenOutside(state, verdict.drift?.detail ?? ""));
      deps.ledger().writtenElsewhere();
    }
    const notice = verdictNotice({
      verdict,
      state: store.get(),
      previous,
      root: facts.root,
      backend: facts.backend,
      worktree: worktree.state,
      autoCreate: deps.config()["lifecycle.autoCreate"],
      stoppedByBudget: deps.maintenance.stoppedByBudget,
    });
    if (notice) notices.once(notice.id, notice.message, notice.level);
    if (
      outcome.verdict.readiness === "unindexed" &&
      deps.config()["lifecycle.autoCreate"] &&
      !deps.maintenance.stoppedByBudget()
    ) {
      void deps.maintenance.run("indexing", ["index", facts.root], "index");
    }
    for (const handler of handlers) handler(verdict);
  };

  return {
    refresh() {
      probing ??= probe().finally(() => {
        probing = undefined;
      });
      return probing;
    },
    onProbe(handler) {
      handlers.add(handler);
      return () => handlers.delete(handler);
    },
  };
}
