// The walk of callers several calls away (src/agent/call-reach.ts) over a small graph of edges, answered as the
// hop query would be: a function reached through confirmed calls is confirmed whatever else reaches it; one
// reached only through a call cgc guessed is possible and names that call; chains come shortest first.
import { describe, expect, it } from "vitest";
import { chainsOf, type FunctionKey, reachCalls } from "../../src/agent/call-reach.ts";

const fn = (name: string, line: number): FunctionKey => ({ name, path: "/r/m.py", line });
const t = fn("t", 1);
const a = fn("a", 10);
const b = fn("b", 20);
const c = fn("c", 30);
const d = fn("d", 40);

const CONFIRMED = { type: "CALLS", label: "EXTRACTED", tier: 6, call: "x" };
const GUESSED = { type: "HEURISTIC_CALLS", label: "AMBIGUOUS", tier: 8, call: "obj.x" };

/** caller → callee edges: c → a → t (confirmed), c → b → t (b → t guessed), d → b (confirmed). */
const EDGES: Array<[FunctionKey, FunctionKey, Record<string, unknown>]> = [
  [a, t, CONFIRMED],
  [b, t, GUESSED],
  [c, a, CONFIRMED],
  [c, b, CONFIRMED],
  [d, b, CONFIRMED],
];

/** The hop query of callers: rows for every edge into a function whose path and line were asked. */
async function rows(_cypher: string, params: Record<string, unknown>) {
  const paths = params.paths as string[];
  const lines = params.lines as number[];
  return EDGES.filter(([, callee]) => paths.includes(callee.path) && lines.includes(callee.line)).map(
    ([caller, callee, edge]) => ({
      fname: callee.name,
      fpath: callee.path,
      fline: callee.line,
      name: caller.name,
      path: caller.path,
      line: caller.line,
      ...edge,
    }),
  );
}

describe("reachCalls", () => {
  it("keeps a function reached through confirmed calls confirmed, and marks one reached only through a guess", async () => {
    const walk = await reachCalls(rows, [t], "callers", 2, 100);
    const ambiguous = "several functions have this name; cgc picked one by name";
    expect(walk.reached).toEqual([
      { ...a, hops: 1 },
      { ...c, hops: 2 },
      { ...b, hops: 1, possible: `b → t: ${ambiguous}` },
      { ...d, hops: 2, possible: `b → t: ${ambiguous}` },
    ]);
    expect(walk.truncated).toBe(false);
  });

  it("stops at its depth and says when it stopped at its limit", async () => {
    expect((await reachCalls(rows, [t], "callers", 1, 100)).reached.map((r) => r.name)).toEqual(["a", "b"]);
    const limited = await reachCalls(rows, [t], "callers", 2, 2);
    expect(limited.truncated).toBe(true);
  });
});

describe("chainsOf", () => {
  it("lists chains shortest first, those of confirmed calls first at one length, marking the guessed link", async () => {
    const walk = await reachCalls(rows, [t], "callers", 3, 100);
    const chains = chainsOf(walk, [c], 3, 10);
    expect(chains.map((chain) => chain.functions.map((f) => f.name).join(" → "))).toEqual(["c → a → t", "c → b → t"]);
    expect(chains[0]?.possible).toBeUndefined();
    expect(chains[1]?.possible).toBe("b → t: several functions have this name; cgc picked one by name");
    expect(chainsOf(walk, [c], 1, 10)).toEqual([]);
  });
});
