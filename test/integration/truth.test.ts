// How true the call graph and pi-cgc's answers are, held at floors: the real cgc's CALLS and HEURISTIC_CALLS
// pairs, and pi-cgc's own possible call sites (engine/pi_cgc_engine/possible_calls.py), against a type-aware
// reference (scip-python, scip-typescript) on two pinned packages, one per language (test/helpers/truth.ts; the
// full table over more corpora is bench/truth.ts's section of bench/RESULTS.md).
//
// Two kinds of floor. The graph's own figures sit just under what cgc 0.6.13 scored here on the embedded default
// backend (`npm run bench -- --only truth --record`), so that a regression of cgc's resolution, or of this
// harness, fails CI. pi-cgc's answers are held at the product's targets: callers listed plainly at 95%
// precision or more; callers and possible callers together finding 97% of the true pairs or more, with at most
// 1% of the called functions left with none; possible callers at 30% precision or more.
import { describe, expect, it } from "vitest";
import { CORPORA, namedPairs, rate, type TruthRun, truthRun } from "../helpers/truth.ts";

function expectSane(run: TruthRun, minimumSites: number): void {
  const { reference, metrics } = run;
  // A reference that found next to nothing (a broken index, a corpus resolved against an installed copy,
  // a changed SCIP layout) would make every ratio meaningless.
  expect(reference.sites.length).toBeGreaterThan(minimumSites);
  expect(reference.unmappedDefinitions / reference.definitions).toBeLessThan(0.15);
  expect(metrics.graphPairs).toBeGreaterThan(minimumSites / 2);
  expect(metrics.byShape.map((row) => row.shape)).toEqual(
    expect.arrayContaining(["plain", "self/this method", "other attribute chain"]),
  );
}

/** The product's targets for what cgc_relations lists. */
function expectAnswerTargets(run: TruthRun): void {
  const m = run.metrics;
  expect(rate(m.plain)).toBeGreaterThanOrEqual(0.95);
  expect(rate(m.answerRecall)).toBeGreaterThanOrEqual(0.97);
  expect(rate(m.answerFalseNone)).toBeLessThanOrEqual(0.01);
  expect(rate(m.possible)).toBeGreaterThanOrEqual(0.3);
  // What pi-cgc adds finds more than the graph alone: every shape's recall is at least the graph's.
  for (const shape of m.byShape) expect(shape.answer.hit).toBeGreaterThanOrEqual(shape.hit);
}

describe("cgc's call graph and pi-cgc's answers against a type-aware reference", () => {
  it("Python (itsdangerous 2.2.0): the graph at its floors, pi-cgc's answers at their targets", async () => {
    const run = await truthRun(CORPORA.itsdangerous);
    expectSane(run, 50);
    const both = "itsdangerous/signer.py:unsign -> itsdangerous/signer.py:verify_signature";
    expect(namedPairs(run, "reference")).toContain(both);
    expect(namedPairs(run, "graph")).toContain(both);
    // `self.load_payload(…)` in TimedSerializer(Serializer[_TSerialized]), a base in another module whose
    // subscript cgc's parser drops: the graph misses it, pi-cgc lists it as possible.
    const inherited = "itsdangerous/timed.py:loads -> itsdangerous/serializer.py:load_payload";
    expect(namedPairs(run, "reference")).toContain(inherited);
    expect(namedPairs(run, "graph")).not.toContain(inherited);
    expect(namedPairs(run, "possible")).toContain(`${inherited}  (subclass)`);
    // The graph. Measured: precision 54/63, recall 54/69, false none 4/30.
    expect(rate(run.metrics.precision)).toBeGreaterThanOrEqual(0.82);
    expect(rate(run.metrics.recall)).toBeGreaterThanOrEqual(0.75);
    expect(rate(run.metrics.falseNone)).toBeLessThanOrEqual(0.2);
    // pi-cgc's answers. Measured: callers 48/48, possible 20/37, recall 68/69, false none 0/30.
    expectAnswerTargets(run);
  }, 900_000);

  it("TypeScript (@tanstack/query-core 5.66.0): the graph at its floors, pi-cgc's answers at their targets", async () => {
    const run = await truthRun(CORPORA["query-core"]);
    expectSane(run, 250);
    const both = "src/queryClient.ts:fetchQuery -> src/queryClient.ts:defaultQueryOptions";
    expect(namedPairs(run, "reference")).toContain(both);
    expect(namedPairs(run, "graph")).toContain(both);
    // `this.scheduleGc()` in Query, whose base Removable (abstract: cgc gives its methods no class) defines it.
    const inherited = "src/query.ts:constructor -> src/removable.ts:scheduleGc";
    expect(namedPairs(run, "graph")).not.toContain(inherited);
    expect(namedPairs(run, "possible")).toContain(`${inherited}  (subclass)`);
    // The graph. Measured: precision 240/345, recall 240/310, false none 15/143.
    expect(rate(run.metrics.precision)).toBeGreaterThanOrEqual(0.67);
    expect(rate(run.metrics.recall)).toBeGreaterThanOrEqual(0.75);
    expect(rate(run.metrics.falseNone)).toBeLessThanOrEqual(0.12);
    // pi-cgc's answers. Measured: callers 151/155, possible 159/290, recall 310/310, false none 0/143.
    expectAnswerTargets(run);
  }, 900_000);
});
