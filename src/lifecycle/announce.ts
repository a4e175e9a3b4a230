// What a settled readiness verdict tells the user, once per session and condition (ADR 0004): cgc missing,
// no graph yet, busy, unknown, damaged, possibly stale at start, ready. A pure function of the verdict and
// what the session knows; the readiness probe (readiness.ts) shows what it returns. What changes here: the
// words of the start-time notices and when each is due.
import { type Backend, shownBackend } from "../cgc/backend.ts";
import { formatElapsed } from "../state/elapsed.ts";
import type { ProbeVerdict, State } from "../state/model.ts";
import type { NoticeId, NoticeLevel } from "../state/notices.ts";
import type { StoppedRun } from "./maintenance.ts";
import type { ScopeState } from "./worktree-scope.ts";

export interface VerdictNotice {
  id: NoticeId;
  message: string;
  level?: NoticeLevel;
}

export interface VerdictFacts {
  verdict: ProbeVerdict;
  /** The state after the verdict, and before it. */
  state: State;
  previous: State;
  root: string;
  backend: Backend | null | undefined;
  worktree: ScopeState;
  autoCreate: boolean;
  /** Read only where it matters (an unindexed graph): it reads the graph's ledger. */
  stoppedByBudget(): StoppedRun | undefined;
}

export function verdictNotice(facts: VerdictFacts): VerdictNotice | undefined {
  const { verdict, state, previous, root, worktree } = facts;
  switch (state.readiness) {
    case "unavailable":
      if (worktree.kind === "refused") return undefined; // the scope's own notice names both worktrees
      return {
        id: "cgc-unavailable",
        message: `cgc is not available: ${verdict.reason}. Install it with \`pipx install codegraphcontext\`, or set cgc.executable.`,
        level: "warning",
      };
    case "unindexed": {
      const stopped = facts.stoppedByBudget();
      if (stopped)
        return {
          id: "unindexed",
          message:
            `No complete code graph for ${root}: the last pi-cgc ${stopped.what} was stopped after ` +
            `${formatElapsed(stopped.ranForMs)} by its time budget (timeouts.maintenanceMs) before it finished. ` +
            "Raise timeouts.maintenanceMs, then run /cgc index.",
          level: "warning",
        };
      if (facts.autoCreate) return undefined;
      const pending = worktree.kind === "pending" ? worktree.name : undefined;
      return {
        id: "unindexed",
        message: pending
          ? `No code graph for ${root} yet: this worktree's CGC named context ${pending} does not exist. Run /cgc index to create it and build the graph, or set lifecycle.autoCreate to true.`
          : `No code graph for ${root} yet. Run /cgc index to build it, or set lifecycle.autoCreate to true.`,
      };
    }
    case "busy":
      return {
        id: "busy",
        message: `cgc is busy: ${verdict.reason}. pi-cgc does not force it; /cgc status re-checks.`,
        level: "warning",
      };
    case "unknown":
      return { id: "probe-unknown", message: `cgc's state is unknown: ${verdict.reason}`, level: "warning" };
    case "corrupt":
      return { id: "corrupt", message: `cgc reports a damaged graph: ${verdict.reason}`, level: "error" };
    case "ready": {
      if (verdict.drift?.changed)
        return {
          id: "drift-detected",
          message: `The graph of ${root} is possibly stale: ${verdict.drift.detail}.`,
          level: "info",
        };
      const repo = state.facts?.repository;
      const wasIndexing = previous.readiness === "indexing" || previous.lastAction?.what === "index";
      const backend = shownBackend(state.facts?.reportedBackend, facts.backend)?.name ?? "backend unknown";
      return {
        id: "indexed",
        message: `${wasIndexing ? "Indexed" : "cgc ready"}: ${root} — ${repo?.files ?? "?"} files, ${repo?.functions ?? "?"} functions (${backend}).`,
      };
    }
    case "indexing":
      return undefined;
  }
}
