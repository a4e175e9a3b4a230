// Callers or callees several calls away, each marked confirmed or possible as src/agent/call-confidence.ts
// splits cgc's call edges: a function is reached for sure only through confirmed calls; one reached only
// through some other call is a possible one, and says which link is not confirmed. The walk goes one hop per
// query, reading each edge's own properties (one Cypher shape that every backend answers the same; path
// functions differ between them: rels(p) on KùzuDB, relationships(p) elsewhere). Only the graph's edges are
// followed: pi-cgc's own possible callers (the engine's call sites) are asked for one function at a time.
import { type CallEdge, isConfirmedCall, possibleCallWhy } from "./call-confidence.ts";

type Row = Record<string, unknown>;

export interface FunctionKey {
  name: string;
  path: string;
  line: number;
}

export interface Reached extends FunctionKey {
  /** The fewest calls between it and a seed: through confirmed calls alone, if it is reached so. */
  hops: number;
  /** Reached only through a call not confirmed: which one, and why it is only possible. */
  possible?: string;
}

/** A call between two functions the walk met (several call sites of one pair are one link). */
export interface Link {
  caller: FunctionKey;
  callee: FunctionKey;
  confirmed: boolean;
  /** For a link not confirmed: why it is only possible. */
  why?: string;
}

export interface Reach {
  /** Every function reached, confirmed ones first, then by hops, path and line (the seeds left out). */
  reached: Reached[];
  links: Link[];
  /** The fewest calls from each function reached (and each seed, 0) to a seed, by its key. */
  distance: Map<string, number>;
  /** The walk stopped at `limit` functions. */
  truncated: boolean;
}

export type Rows = (cypher: string, params: Record<string, unknown>) => Promise<Row[]>;

export const keyOf = (fn: FunctionKey) => `${fn.path}\0${fn.line}\0${fn.name}`;

const text = (value: unknown) => (typeof value === "string" ? value : "");
const functionOf = (name: unknown, path: unknown, line: unknown): FunctionKey => ({
  name: text(name),
  path: text(path),
  line: Number(line),
});

/** The edge's properties, as call-confidence.ts reads them; `recursive`: it links a function to itself. */
export const edgeOf = (row: Row, recursive = false): CallEdge => ({
  type: text(row.type),
  label: row.label,
  tier: row.tier,
  call: row.call,
  recursive,
});

/** One hop from `from`: the other end of each call edge into (callers) or out of (callees) those functions. */
async function hop(
  rows: Rows,
  from: FunctionKey[],
  direction: "callers" | "callees",
  label: "Function" | "Class",
): Promise<Row[]> {
  const edge =
    direction === "callers"
      ? `(o:Function)-[r:CALLS|HEURISTIC_CALLS]->(f:${label})`
      : `(f:${label})-[r:CALLS|HEURISTIC_CALLS]->(o:Function)`;
  const wanted = new Set(from.map(keyOf));
  const found = await rows(
    `MATCH ${edge} WHERE f.path IN $paths AND f.line_number IN $lines ` +
      "RETURN f.name AS fname, f.path AS fpath, f.line_number AS fline, o.name AS name, o.path AS path, " +
      "o.line_number AS line, type(r) AS type, r.confidence_label AS label, r.resolution_tier AS tier, " +
      "r.full_call_name AS call",
    { paths: [...new Set(from.map((fn) => fn.path))], lines: [...new Set(from.map((fn) => fn.line))] },
  );
  // The query matches every pairing of the paths and lines asked; only the functions asked for count.
  return found.filter((row) => wanted.has(keyOf(functionOf(row.fname, row.fpath, row.fline))));
}

/**
 * Walks `depth` hops of callers (or callees) from the seeds (Functions, or Classes: their instantiations). A
 * function is confirmed when some path of confirmed calls reaches it; otherwise it is possible, and names the
 * first call on its way that is not confirmed.
 */
export async function reachCalls(
  rows: Rows,
  seeds: FunctionKey[],
  direction: "callers" | "callees",
  depth: number,
  limit: number,
  seedLabel: "Function" | "Class" = "Function",
): Promise<Reach> {
  const seedKeys = new Set(seeds.map(keyOf));
  const confirmed = new Map<string, Reached>();
  const possible = new Map<string, Reached>();
  const distance = new Map<string, number>(seeds.map((seed) => [keyOf(seed), 0]));
  const links = new Map<string, Link>();
  let frontier = seeds;
  let truncated = false;
  for (let hops = 1; hops <= depth && frontier.length > 0 && !truncated; hops++) {
    const next = new Map<string, FunctionKey>();
    for (const row of await hop(rows, frontier, direction, hops === 1 ? seedLabel : "Function")) {
      const near = functionOf(row.fname, row.fpath, row.fline);
      const far = functionOf(row.name, row.path, row.line);
      const nearKey = keyOf(near);
      const farKey = keyOf(far);
      const edge = edgeOf(row, nearKey === farKey);
      const sure = isConfirmedCall(edge);
      const [caller, callee] = direction === "callers" ? [far, near] : [near, far];
      const linkKey = `${keyOf(caller)}\0\0${keyOf(callee)}`;
      const link = links.get(linkKey);
      if (!link || (!link.confirmed && sure))
        links.set(linkKey, { caller, callee, confirmed: sure, why: sure ? undefined : possibleCallWhy(edge) });
      if (seedKeys.has(farKey)) continue;
      if (!distance.has(farKey)) distance.set(farKey, hops);
      const nearSure = seedKeys.has(nearKey) || confirmed.has(nearKey);
      if (nearSure && sure) {
        if (confirmed.has(farKey)) continue;
        confirmed.set(farKey, { ...far, hops });
        next.set(farKey, far);
      } else if (!confirmed.has(farKey) && !possible.has(farKey)) {
        const why = nearSure
          ? `${caller.name} → ${callee.name}: ${possibleCallWhy(edge)}`
          : (possible.get(nearKey)?.possible ?? possibleCallWhy(edge));
        possible.set(farKey, { ...far, hops, possible: why });
        next.set(farKey, far);
      }
    }
    frontier = [...next.values()];
    truncated = confirmed.size + possible.size >= limit && frontier.length > 0 && hops < depth;
  }
  const order = (a: Reached, b: Reached) => a.hops - b.hops || a.path.localeCompare(b.path) || a.line - b.line;
  const reached = [
    ...[...confirmed.values()].sort(order),
    ...[...possible.entries()]
      .filter(([key]) => !confirmed.has(key))
      .map(([, fn]) => fn)
      .sort(order),
  ];
  return { reached, links: [...links.values()], distance, truncated };
}

export interface Chain {
  functions: FunctionKey[];
  /** The first link of the chain that is not confirmed, and why; undefined when every link is. */
  possible?: string;
}

/** Chains of one length enumerated at most: a bound on the work where many paths share their ends. */
const CHAINS_PER_LENGTH = 1_000;

/**
 * Call chains from any of `starts` to a seed of `reach` (a walk of callers from the chain's end), at most `limit`,
 * shortest first and, at one length, those of confirmed calls first. Each function appears once in a chain.
 */
export function chainsOf(reach: Reach, starts: FunctionKey[], depth: number, limit: number): Chain[] {
  const out = new Map<string, Link[]>();
  for (const link of reach.links) {
    const from = keyOf(link.caller);
    out.set(from, [...(out.get(from) ?? []), link]);
  }
  const chains: Chain[] = [];
  for (let length = 1; length <= depth && chains.length < limit; length++) {
    const found: Chain[] = [];
    // `left`: calls still to make; a function is stepped to only if a seed is that near from it.
    const walk = (path: FunctionKey[], links: Link[], left: number) => {
      const at = path[path.length - 1] as FunctionKey;
      if (left === 0) {
        if (reach.distance.get(keyOf(at)) !== 0) return;
        const loose = links.find((link) => !link.confirmed);
        found.push({
          functions: path,
          possible: loose ? `${loose.caller.name} → ${loose.callee.name}: ${loose.why ?? "not confirmed"}` : undefined,
        });
        return;
      }
      for (const link of out.get(keyOf(at)) ?? []) {
        if (found.length >= CHAINS_PER_LENGTH) return;
        const next = keyOf(link.callee);
        const remaining = reach.distance.get(next);
        if (remaining === undefined || remaining > left - 1 || path.some((fn) => keyOf(fn) === next)) continue;
        walk([...path, link.callee], [...links, link], left - 1);
      }
    };
    for (const start of starts) if (reach.distance.has(keyOf(start))) walk([start], [], length);
    found.sort((a, b) => Number(a.possible !== undefined) - Number(b.possible !== undefined));
    chains.push(...found);
  }
  return chains.slice(0, limit);
}
