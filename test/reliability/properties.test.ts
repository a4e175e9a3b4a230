// Property tests (fast-check): random event sequences over the state model's pure transitions, random
// verdict sequences through the session's announce logic, random files and environments through the
// config loader. Each property is one of the invariants of DESIGN.md ("What honest means here") in a form
// a machine can check; docs/reliability.md states them in words.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  autoSyncCounted,
  changesObserved,
  freshnessNotVerified,
  freshnessVerified,
  initialState,
  maintenanceProgress,
  maintenanceSettled,
  maintenanceStarted,
  type ProbeVerdict,
  probeSettled,
  type Readiness,
  type State,
} from "../../src/state/model.ts";

// ---------------------------------------------------------------------------------------------------
// The state model

const PATHS = ["/ws/a.py", "/ws/b.py", "/ws/pkg/c.py", "/ws/d.ts"];
const VERDICT_READINESS: Array<Exclude<Readiness, "indexing">> = [
  "unavailable",
  "unindexed",
  "ready",
  "busy",
  "unknown",
  "corrupt",
];
const OUTCOMES = ["OK", "FAILED", "TIMEOUT", "CANCELLED", "BUSY", "UNAVAILABLE"] as const;

type Event =
  | { kind: "probe"; verdict: ProbeVerdict }
  | { kind: "started"; activity: "indexing" | "syncing" | "rebuilding" }
  | { kind: "progress" }
  | { kind: "settled"; outcome: (typeof OUTCOMES)[number] }
  | { kind: "changes"; paths: string[] }
  | { kind: "verified"; reconciled: string[] }
  | { kind: "notVerified" }
  | { kind: "autoSync" };

const pathsArb = fc.subarray(PATHS);
const eventArb: fc.Arbitrary<Event> = fc.oneof(
  fc.record({
    kind: fc.constant("probe" as const),
    verdict: fc.record({
      readiness: fc.constantFrom(...VERDICT_READINESS),
      reason: fc.constant("probe"),
      drift: fc.option(fc.record({ changed: fc.boolean(), paths: pathsArb, detail: fc.constant("d") }), {
        nil: undefined,
      }),
    }),
  }),
  fc.record({ kind: fc.constant("started" as const), activity: fc.constantFrom("indexing", "syncing", "rebuilding") }),
  fc.record({ kind: fc.constant("progress" as const) }),
  fc.record({ kind: fc.constant("settled" as const), outcome: fc.constantFrom(...OUTCOMES) }),
  fc.record({ kind: fc.constant("changes" as const), paths: pathsArb }),
  fc.record({ kind: fc.constant("verified" as const), reconciled: pathsArb }),
  fc.record({ kind: fc.constant("notVerified" as const) }),
  fc.record({ kind: fc.constant("autoSync" as const) }),
);

function apply(state: State, event: Event): State {
  switch (event.kind) {
    case "probe":
      return probeSettled(state, event.verdict);
    case "started":
      return state.activity === "idle" ? maintenanceStarted(state, event.activity, "work") : state;
    case "progress":
      return maintenanceProgress(state, "50 files scanned");
    case "settled":
      return state.activity === "idle" ? state : maintenanceSettled(state, event.outcome, `work: ${event.outcome}`);
    case "changes":
      return changesObserved(state, event.paths);
    case "verified":
      return freshnessVerified(state, event.reconciled);
    case "notVerified":
      return freshnessNotVerified(state, "not verified");
    case "autoSync":
      return autoSyncCounted(state);
  }
}

/** The events that may make a graph fresh, and when (the verifications of DESIGN.md). */
function verifiesFreshness(before: State, event: Event): boolean {
  if (event.kind === "verified") return before.changedPaths.every((path) => event.reconciled.includes(path));
  // The start-time check: the graph's recorded commit and index time against the repository, found unchanged,
  // on a graph not already known to lag.
  return (
    event.kind === "probe" &&
    event.verdict.readiness === "ready" &&
    event.verdict.drift?.changed === false &&
    before.freshness !== "possibly-stale"
  );
}

/** The events after which the graph is not known to reflect the files. */
function unverifiesFreshness(event: Event, before: State): boolean {
  return (
    (event.kind === "changes" && event.paths.length > 0) ||
    event.kind === "notVerified" ||
    (event.kind === "settled" &&
      before.activity !== "idle" &&
      (event.outcome === "FAILED" || event.outcome === "TIMEOUT" || event.outcome === "CANCELLED"))
  );
}

describe("the state model under random event sequences", () => {
  const sequences = fc.array(eventArb, { maxLength: 40 });

  it("never becomes fresh, nor stays fresh, without a verification", () => {
    fc.assert(
      fc.property(sequences, (events) => {
        let state = initialState();
        for (const event of events) {
          const next = apply(state, event);
          if (next.freshness === "fresh") {
            const stays = state.freshness === "fresh" && !unverifiesFreshness(event, state);
            expect(stays || verifiesFreshness(state, event), JSON.stringify({ state, event, next })).toBe(true);
          }
          state = next;
        }
      }),
      { numRuns: 2_000 },
    );
  });

  it("is corrupt only from a probe that said corrupt; busy never turns into corrupt any other way", () => {
    fc.assert(
      fc.property(sequences, (events) => {
        let state = initialState();
        for (const event of events) {
          const next = apply(state, event);
          if (next.readiness === "corrupt" && state.readiness !== "corrupt") {
            expect(event.kind === "probe" && event.verdict.readiness === "corrupt").toBe(true);
          }
          if (state.readiness === "busy" && event.kind !== "probe") expect(next.readiness).not.toBe("corrupt");
          state = next;
        }
      }),
      { numRuns: 2_000 },
    );
  });

  it("opens exactly one possibly-stale episode per entry into possibly stale", () => {
    fc.assert(
      fc.property(sequences, (events) => {
        let state = initialState();
        for (const event of events) {
          const next = apply(state, event);
          const entered = next.freshness === "possibly-stale" && state.freshness !== "possibly-stale";
          expect(next.episodes - state.episodes).toBe(entered ? 1 : 0);
          state = next;
        }
      }),
      { numRuns: 2_000 },
    );
  });

  it("after work that ended part-way, is not fresh until a sync is verified", () => {
    const partial = fc.constantFrom("FAILED", "TIMEOUT", "CANCELLED");
    fc.assert(
      fc.property(sequences, partial, sequences, (before, outcome, after) => {
        let state = before.reduce(apply, initialState());
        state = maintenanceSettled(maintenanceStarted({ ...state, activity: "idle" }, "rebuilding", "sync"), outcome);
        expect(state.freshness).toBe("possibly-stale");
        for (const event of after) {
          const next = apply(state, event);
          if (next.freshness === "fresh" && state.freshness !== "fresh")
            expect(["verified", "probe"]).toContain(event.kind);
          state = next;
        }
      }),
      { numRuns: 1_000 },
    );
  });
});
