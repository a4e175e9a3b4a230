// The injection tiers' content: capped coverage facts that degrade gracefully, and no line that repeats
// the routing card (the two content classes are disjoint).
import { describe, expect, it } from "vitest";
import { cardLines } from "../../src/agent/card.ts";
import { coverageNote, driftSteer, NOTE_MAX_CHARS } from "../../src/agent/inject.ts";
import { initialState, probeSettled, type State } from "../../src/state/model.ts";

const fullCard = cardLines({
  graph: {
    relations: "cgc_relations",
    find: "cgc_find",
    deadCode: "cgc_dead_code",
    complexity: "cgc_complexity",
    cypher: "cgc_cypher",
    stats: "cgc_stats",
  },
  text: ["read", "grep", "bash"],
  doctor: "cgc_doctor",
  skill: "cgc-routing",
});

function ready(
  repository: NonNullable<State["facts"]>["repository"],
  extra: Partial<NonNullable<State["facts"]>> = {},
) {
  return probeSettled(
    initialState(),
    {
      readiness: "ready",
      reason: "indexed",
      facts: {
        cgcVersion: "0.6.13",
        backend: { name: "kuzudb", source: "auto" },
        repository,
        takenAt: Date.UTC(2026, 10, 30, 8),
        spawns: 2,
        ...extra,
      },
    },
    Date.UTC(2026, 10, 30, 8),
  );
}

describe("coverage note", () => {
  it("states the facts with their scope and snapshot", () => {
    const note = coverageNote(
      ready({
        path: "/r",
        files: 6,
        functions: 19,
        classes: 4,
        languages: ["python"],
        indexedAt: "2026-11-30T07:00:00+00:00",
        commit: "9f838f652670e3ffabec79a2c2e18086e58ea687",
      }),
      "/r",
    );
    expect(note).toBe(
      "Code graph coverage: /r — 6 files (python), 19 functions, 4 classes. It was indexed at 2026-11-30T07:00:00+00:00 (commit 9f838f652670). Snapshot 2026-11-30T08:00:00Z; CodeGraphContext 0.6.13, kuzudb backend.",
    );
  });

  it("degrades to presence and time when counts are missing", () => {
    expect(coverageNote(ready({ path: "/r" }), "/r")).toBe(
      "A code graph of /r exists. Snapshot 2026-11-30T08:00:00Z; CodeGraphContext 0.6.13, kuzudb backend.",
    );
  });

  it("is capped", () => {
    const note = coverageNote(
      ready({ path: "/r", files: 1, functions: 1, languages: Array.from({ length: 300 }, (_, i) => `lang${i}`) }),
      "/r",
    );
    expect(note?.length).toBe(NOTE_MAX_CHARS);
  });

  it("is absent while not ready", () => {
    expect(coverageNote(initialState(), "/r")).toBeUndefined();
    expect(
      coverageNote(probeSettled(initialState(), { readiness: "unindexed", reason: "no repo" }, 0), "/r"),
    ).toBeUndefined();
  });
});

describe("content classes", () => {
  it("no line of tier content repeats a line of the routing card", () => {
    const state = ready({ path: "/r", files: 6, functions: 19, classes: 4, languages: ["python"] });
    const tierText = [coverageNote(state, "/r") ?? "", driftSteer({ ...state, changedPaths: ["/r/a.py"] })].join("\n");
    const card = new Set(fullCard.map((line) => line.trim()));
    expect(fullCard.length).toBeGreaterThan(3);
    for (const line of tierText.split("\n")) expect(card.has(line.trim())).toBe(false);
    for (const line of fullCard) expect(tierText).not.toContain(line);
  });
});

describe("the impact note's content class", () => {
  it("repeats no line of the routing card", async () => {
    const { impactLine, impactNote } = await import("../../src/agent/impact-note.ts");
    const { fileChanges } = await import("../../src/agent/impact.ts");
    const [change] = fileChanges("/r/a.py", "def f(a):\n", "def f(a, b):\n");
    const note = impactNote([
      impactLine("/r", "/r/a.py", change as NonNullable<typeof change>, [
        { relation: "caller", name: "g", path: "/r/b.py", line: 3, hops: 1 },
      ]),
    ]);
    const withImpact = cardLines({ graph: { relations: "cgc_relations" }, impact: "cgc_impact", text: ["read"] });
    for (const line of [...fullCard, ...withImpact]) expect(note).not.toContain(line);
  });
});
