// Who wrote the graph last. cgc stamps the Repository node's `indexed_at` when it indexes — `cgc index`,
// `cgc watch`'s first scan, pi-cgc's engine on each update — and records nothing else about the writer (a
// change `cgc watch` applies later leaves no stamp: the engine distrusts its model after meeting the lock,
// ADR 0011). pi-cgc keeps the windows in which its own runs wrote (the graph's ledger, state/ledger.ts), so
// a stamp that falls in none of them, on a graph this session did not start with, was written by another
// cgc process: a `cgc watch` starting in a terminal, an MCP server, the user's own command. What such a
// writer left is not known to equal a full index of the tree (`cgc watch` measurably does not: ADR 0010), so
// the graph is not called fresh again before a full rebuild. A graph found at session start is taken as its
// index time says, as before: the windows of earlier sessions cannot tell a user's `cgc index --force` from a
// watcher.
import type { GraphLedger } from "../state/ledger.ts";

export interface GraphProvenance {
  /**
   * A settled probe's view of the graph (`indexedAt` undefined: no graph, or cgc recorded no time). Returns
   * why the graph was written by another process since this session last saw it, or undefined.
   */
  check(indexedAt: string | undefined, hasGraph: boolean): string | undefined;
  /**
   * A write of pi-cgc's own (the engine's update, in the window `window`) found the stamp `before` and left
   * `after`. Returns why another process wrote between the stamp this session last knew and this write, or
   * undefined; the stamp known from now on is `after`.
   */
  ownWrite(before: string | null | undefined, after: string | null | undefined, window: string): string | undefined;
}

/** `ledger`: the ledger of the session's graph at the moment of asking (its root may change at a probe). */
export function createGraphProvenance(ledger: () => Pick<GraphLedger, "writtenByPiCgc">): GraphProvenance {
  let seen = false;
  let known: string | undefined;
  return {
    check(indexedAt, hasGraph) {
      const first = !seen;
      seen = true;
      const previous = known;
      known = hasGraph ? indexedAt : undefined;
      if (first || !hasGraph || indexedAt === undefined || indexedAt === previous) return undefined;
      return outside(indexedAt);
    },
    ownWrite(before, after, window) {
      const previous = known;
      if (after) known = after;
      if (!seen || !before || previous === undefined || before === previous) return undefined;
      return outside(before, window);
    },
  };

  function outside(stamp: string, except?: string): string | undefined {
    const stampMs = Date.parse(stamp);
    if (Number.isNaN(stampMs) || ledger().writtenByPiCgc(stampMs, except)) return undefined;
    return `the graph was written at ${stamp} by another cgc process, not by pi-cgc (a cgc watch, an MCP server or a cgc command), and such a write is not known to leave what a full index would`;
  }
}
