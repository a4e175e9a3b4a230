// Which of cgc's call edges pi-cgc lists plainly as callers (a fact), and which it lists apart as possible
// callers (cgc's guess, marked with why). One rule, shared by cgc_relations and the truth harness
// (test/helpers/truth.ts), which reports how true each list is.
//
// cgc records on each edge the step of its resolver that linked the call (`resolution_tier`) and the call as it
// read it (`full_call_name`). Measured (bench/RESULTS.md, "Call-graph truth against a type-aware reference":
// cgc 0.6.13's pairs against scip-python / scip-typescript on itsdangerous, click, jinja2 and
// @tanstack/query-core, pooled), the classes at 95% or more are CALLS EXTRACTED at tier 1 (a self/this/super
// receiver: 98.5%, 596/605), at tier 6 (an imported name: 95.2%, 177/186; a plain imported name alone 93.8%)
// and at tier 2 when the call is a plain name (a function of the same file: 96.8%, 240/248). Tier 2 through an
// object (`obj.method()`, matched by the method's name in the same file) is right 54.5% of the time; every
// other class is under 90%.

export interface CallEdge {
  /** CALLS or HEURISTIC_CALLS. */
  type: string;
  /** cgc's confidence_label: EXTRACTED, INFERRED or AMBIGUOUS. */
  label: unknown;
  /** cgc's resolution_tier, 1 to 9. */
  tier: unknown;
  /** cgc's full_call_name: `helper`, `self.helper`, `obj.attr.helper`. */
  call: unknown;
  /** Whether the edge links a function to itself. */
  recursive?: boolean;
}

const plainName = (call: unknown): boolean => typeof call === "string" && call !== "" && !call.includes(".");

const superCall = (call: unknown): boolean => typeof call === "string" && /^super\b/.test(call);

/**
 * Whether an edge is listed plainly as a call: its class measured at 95% precision or more (above). cgc 0.6.13
 * links `super().m()` in `m` to `m` itself at tier 1: never right, so such an edge is only possible.
 */
export function isConfirmedCall(edge: CallEdge): boolean {
  if (edge.type !== "CALLS" || edge.label !== "EXTRACTED") return false;
  if (edge.recursive === true && superCall(edge.call)) return false;
  const tier = Number(edge.tier);
  return tier === 1 || tier === 6 || (tier === 2 && plainName(edge.call));
}

/** Why a call not confirmed is only possible, in plain words from cgc's resolver step (else its label). */
export function possibleCallWhy(edge: CallEdge): string {
  if (edge.recursive === true && superCall(edge.call)) return "cgc linked a super() call to the calling method itself";
  switch (Number(edge.tier)) {
    case 2:
      return "a call through an object; cgc matched the method's name in the same file, not the object's type";
    case 3:
    case 4:
      return "cgc inferred the object's type";
    case 5:
      return "cgc matched a short name in the package, not an import";
    case 7:
      return "cgc matched part of a module path";
    case 8:
      return "several functions have this name; cgc picked one by name";
    case 9:
      return "an unresolved call on an object, linked to a function of the same file";
  }
  if (edge.label === "AMBIGUOUS") return "several functions have this name; cgc picked one by name";
  if (edge.label === "INFERRED") return "resolved by cgc's inference, not by an import or a definition";
  return `linked by a step of cgc's resolver (tier ${String(edge.tier ?? "?")}) measured under 95% right`;
}

/** Ranking of possible calls: EXTRACTED, then INFERRED, then AMBIGUOUS (ties by path, then line). */
export function possibleCallRank(label: unknown): number {
  if (label === "EXTRACTED") return 0;
  if (label === "INFERRED") return 1;
  if (label === "AMBIGUOUS") return 2;
  return 3;
}

/** pi-cgc's possible call site of a function (engine/pi_cgc_engine/possible_calls.py): rank 0 strongest. */
export interface PossibleSite {
  rank: number;
}

/** Sites of this rank are listed only for a function with no other caller, confirmed or possible. */
export const FALLBACK_RANK = 2;

/**
 * The sites listed for one function: those under the fallback rank, or all of them where nothing else would be
 * listed (no graph edge into the function, `graphCallers`, and no site of a lower rank).
 */
export function listedSites<T extends PossibleSite>(sites: readonly T[], graphCallers: number): T[] {
  const strong = sites.filter((site) => site.rank < FALLBACK_RANK);
  return graphCallers + strong.length > 0 ? strong : [...sites];
}
