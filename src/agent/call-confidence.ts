// Which of cgc's call edges pi-cgc lists plainly as callers (a fact), and which it lists apart as possible
// callers (cgc's guess, marked with why). One rule, shared by cgc_relations and the truth harness
// (test/helpers/truth.ts), which reports how true each list is.
//
// Measured (bench/RESULTS.md, "Call-graph truth against a type-aware reference": cgc 0.6.13's pairs against
// scip-python / scip-typescript on itsdangerous, click, jinja2 and @tanstack/query-core, pooled): only two
// classes reach 95% precision, CALLS EXTRACTED at resolution_tier 1 (98.5%, 596/605) and at tier 6 (95.2%,
// 177/186; jinja2 alone 86.1%). Every other class is under it: CALLS EXTRACTED tier 2 (79.8%), tier 5
// (70.3%), tier 3 (0/4), CALLS INFERRED tier 4 (89.7%) and tier 7 (60.0%), HEURISTIC_CALLS AMBIGUOUS
// tier 8 (45.4%).

export type CallEdgeType = "CALLS" | "HEURISTIC_CALLS";

/** The edge classes listed plainly as callers: pooled precision ≥ 0.95 in the truth bench. */
const CONFIRMED_TIERS = new Set([1, 6]);

/** Whether an edge of this type, confidence_label and resolution_tier is listed plainly as a call. */
export function isConfirmedCall(type: string, label: unknown, tier: unknown): boolean {
  return type === "CALLS" && label === "EXTRACTED" && CONFIRMED_TIERS.has(Number(tier));
}

/** Why a call not confirmed is only possible, in plain words from cgc's confidence_label. */
export function possibleCallWhy(type: string, label: unknown, tier: unknown): string {
  if (label === "AMBIGUOUS") return "several functions have this name; cgc picked by name";
  if (label === "INFERRED") return "resolved by cgc's inference, not by an import or definition";
  if (type === "HEURISTIC_CALLS") return "linked by cgc's name heuristic";
  return `resolved by a cgc step (tier ${String(tier ?? "?")}) measured under 95% right`;
}

/** Ranking of possible calls: INFERRED before AMBIGUOUS before the rest (ties by path, then line). */
export function possibleCallRank(label: unknown): number {
  if (label === "EXTRACTED") return 0;
  if (label === "INFERRED") return 1;
  if (label === "AMBIGUOUS") return 2;
  return 3;
}
