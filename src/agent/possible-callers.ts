// pi-cgc's own possible callers: call sites of a function's name that cgc's graph does not link to it and that
// the engine's rules (engine/pi_cgc_engine/possible_calls.py) cannot rule out, from the engine's parse of the
// tree. They are listed apart from the graph's callers, marked with why; where the engine does not run they are
// unknown, and the answers say so rather than "no callers".
import type { PossibleSite, PossibleTarget } from "../cgc/possible-sites.ts";
import { listedSites } from "./call-confidence.ts";

export type { PossibleSite, PossibleTarget } from "../cgc/possible-sites.ts";

/** The engine's sites, one list per target in the order asked, or why they are unknown. */
export type PossibleAnswer = { sites: PossibleSite[][] } | { unknown: string };

export type PossibleCallers = (targets: readonly PossibleTarget[], signal?: AbortSignal) => Promise<PossibleAnswer>;

export interface EngineSite extends PossibleSite {
  target: PossibleTarget;
}

const targetKey = (target: PossibleTarget) => `${target.path}\0${target.line}\0`;

/** A call into a target the graph already lists: the calling file and the call's line. */
export const listedKey = (target: PossibleTarget, path: string, line: unknown) =>
  `${targetKey(target)}${path}\0${Number(line)}`;

/**
 * The engine's sites for `targets` that the graph does not list already (`listed`: listedKey of each call edge
 * the graph returned into a target), strongest first (rank, then path and line).
 */
export async function engineSites(
  possibleCallers: PossibleCallers,
  targets: readonly PossibleTarget[],
  listed: ReadonlySet<string>,
  signal: AbortSignal | undefined,
): Promise<{ sites: EngineSite[] } | { unknown: string }> {
  if (targets.length === 0) return { sites: [] };
  const answer = await possibleCallers(targets, signal);
  if ("unknown" in answer) return answer;
  const seen = new Set<string>();
  const sites: EngineSite[] = [];
  for (const [index, target] of targets.entries()) {
    const own = answer.sites[index] ?? [];
    // The weakest rank only where nothing else would be listed (call-confidence.ts, as the truth harness measures).
    const edges = [...listed].filter((key) => key.startsWith(targetKey(target))).length;
    for (const site of listedSites(own, edges)) {
      const key = listedKey(target, site.path, site.line);
      if (listed.has(key) || seen.has(key)) continue;
      seen.add(key);
      sites.push({ ...site, target });
    }
  }
  sites.sort((a, b) => a.rank - b.rank || a.path.localeCompare(b.path) || a.line - b.line);
  return { sites };
}

/** The caller as a listing names it: its name, or "module level". */
export const callerName = (site: PossibleSite) => (site.caller === "<module>" ? "(module level)" : site.caller);

/** The line that says possible callers are unknown, and why. */
export const unknownLine = (reason: string) =>
  `Possible callers the graph does not link: unknown (${reason}). Before changing a signature, also grep for calls of the name.`;
