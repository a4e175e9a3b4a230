// Property tests (fast-check): random event sequences over the state model's pure transitions, random
// verdict sequences through the session's announce logic, random files and environments through the
// config loader. Each property is one of the invariants docs/reliability.md states in words (its opening
// paragraph) in a form a machine can check.
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { ExtensionContext } from "@mariozechner/pi-coding-agent";
import fc from "fast-check";
import { describe, expect, it, vi } from "vitest";
import { detectBusy, detectDamagedDatabase } from "../../src/cgc/parse.ts";
import type { Runner, RunResult } from "../../src/cgc/runner.ts";
import { CONFIG_KEY_NAMES, CONFIG_KEYS, type ConfigKey, defaultConfig } from "../../src/config/keys.ts";
import { loadConfig, type Source } from "../../src/config/load.ts";
import { probeReadiness } from "../../src/lifecycle/probe.ts";
import {
  autoSyncCounted,
  changesObserved,
  freshnessNotVerified,
  freshnessVerified,
  initialState,
  maintenanceProgress,
  maintenanceSettled,
  maintenanceStarted,
  otherWritersSeen,
  type ProbeVerdict,
  probeSettled,
  type Readiness,
  type State,
} from "../../src/state/model.ts";
import type { NoticeId } from "../../src/state/notices.ts";
import { chipText, mountChip } from "../../src/ui/chip.ts";
import { createChangeTracker } from "../../src/workspace/tracker.ts";
import { PROJECT_ROOT } from "../helpers/cgc-env.ts";

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
  | { kind: "autoSync" }
  | { kind: "otherWatcher"; running: boolean };

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
  fc.record({ kind: fc.constant("otherWatcher" as const), running: fc.boolean() }),
);

/** One event at time `now` (as `reduce` calls it: the event's index, a clock that only moves forward). */
function apply(state: State, event: Event, now: number): State {
  switch (event.kind) {
    case "probe":
      return probeSettled(state, event.verdict, now);
    case "started":
      return state.activity === "idle" ? maintenanceStarted(state, event.activity, "work", now) : state;
    case "progress":
      return maintenanceProgress(state, "50 files scanned");
    case "settled":
      return state.activity === "idle"
        ? state
        : maintenanceSettled(state, event.outcome, now, `work: ${event.outcome}`);
    case "changes":
      return changesObserved(state, event.paths);
    case "verified":
      return freshnessVerified(state, event.reconciled, now);
    case "notVerified":
      return freshnessNotVerified(state, "not verified");
    case "autoSync":
      return autoSyncCounted(state);
    case "otherWatcher":
      return otherWritersSeen(state, event.running ? "a cgc watch outside pi-cgc (pid 7)" : undefined);
  }
}

/** The events that may make a graph fresh, and when (docs/reliability.md, "What counts as evidence"). */
function verifiesFreshness(before: State, event: Event): boolean {
  // While another watcher runs, what was read back may be overwritten after the read-back: no verification.
  if (event.kind === "verified")
    return !before.otherWriter && before.changedPaths.every((path) => event.reconciled.includes(path));
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
        for (const [at, event] of events.entries()) {
          const next = apply(state, event, at);
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
        for (const [at, event] of events.entries()) {
          const next = apply(state, event, at);
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
        for (const [at, event] of events.entries()) {
          const next = apply(state, event, at);
          const entered = next.freshness === "possibly-stale" && state.freshness !== "possibly-stale";
          expect(next.episodes - state.episodes).toBe(entered ? 1 : 0);
          state = next;
        }
      }),
      { numRuns: 2_000 },
    );
  });

  it("reads no clock: the same events at the same times give the same states, stamped with those times", () => {
    fc.assert(
      fc.property(sequences, fc.integer({ min: 0, max: 2 ** 40 }), (events, start) => {
        const run = () => events.reduce((state, event, i) => apply(state, event, start + i), initialState());
        const state = run();
        expect(run()).toEqual(state);
        for (const at of [state.activityStartedAt, state.lastAction?.at, state.verifiedAt]) {
          if (at !== undefined) expect(at - start).toBeGreaterThanOrEqual(0);
          if (at !== undefined) expect(at - start).toBeLessThan(Math.max(events.length, 1));
        }
      }),
      { numRuns: 500 },
    );
  });

  it("after work that ended part-way, is not fresh until a sync is verified", () => {
    const partial = fc.constantFrom("FAILED", "TIMEOUT", "CANCELLED");
    fc.assert(
      fc.property(sequences, partial, sequences, (before, outcome, after) => {
        let state = before.reduce(apply, initialState());
        state = maintenanceSettled(
          maintenanceStarted({ ...state, activity: "idle" }, "rebuilding", "sync", 0),
          outcome,
          0,
        );
        expect(state.freshness).toBe("possibly-stale");
        for (const [at, event] of after.entries()) {
          const next = apply(state, event, at);
          if (next.freshness === "fresh" && state.freshness !== "fresh")
            expect(["verified", "probe"]).toContain(event.kind);
          state = next;
        }
      }),
      { numRuns: 1_000 },
    );
  });
});

// ---------------------------------------------------------------------------------------------------
// The config loader

/** A raw value for a key: often one its type accepts, often one it does not. */
function rawValueArb(name: ConfigKey): fc.Arbitrary<unknown> {
  const label = CONFIG_KEYS[name].type.label;
  const likely = label.includes("integer")
    ? fc.oneof(fc.integer({ min: -10, max: 200_000 }), fc.integer({ min: 0, max: 5_000 }).map(String))
    : label === "boolean"
      ? fc.oneof(fc.boolean(), fc.constantFrom("true", "no", "ON", " 1 ", "maybe"))
      : fc.constantFrom("off", "on", "auto", "isolate", "AUTO ", "/usr/bin/cgc", "cgc", true, false);
  return fc.oneof({ weight: 3, arbitrary: likely }, { weight: 1, arbitrary: fc.jsonValue() });
}

const HOSTILE_KEYS = ["__proto__", "constructor", "toString", "prototype", "timeouts.__proto__", "freshness.wacth"];

interface FileSpec {
  kind: "missing" | "object" | "malformed" | "not-an-object";
  entries: Array<[string, unknown, boolean]>; // name, raw value, nested?
  raw: string;
}

const fileArb: fc.Arbitrary<FileSpec> = fc.oneof(
  { weight: 1, arbitrary: fc.constant<FileSpec>({ kind: "missing", entries: [], raw: "" }) },
  {
    weight: 4,
    arbitrary: fc
      .uniqueArray(fc.constantFrom<string>(...CONFIG_KEY_NAMES, ...HOSTILE_KEYS), { maxLength: 8 })
      .chain((names) =>
        fc.tuple(
          ...names.map((name) =>
            fc.tuple(
              fc.constant(name),
              CONFIG_KEY_NAMES.includes(name as ConfigKey) ? rawValueArb(name as ConfigKey) : fc.jsonValue(),
              fc.boolean(),
            ),
          ),
        ),
      )
      .map((entries) => ({ kind: "object" as const, entries, raw: "" })),
  },
  {
    weight: 1,
    arbitrary: fc
      .constantFrom("{ not json", '{"timeouts": ', "", "\u0000")
      .map((raw) => ({ kind: "malformed" as const, entries: [], raw })),
  },
  {
    weight: 1,
    arbitrary: fc.constantFrom("[1]", '"on"', "42", "null", "true").map((raw) => ({
      kind: "not-an-object" as const,
      entries: [],
      raw,
    })),
  },
);

/** The file text: each key flat ("a.b") or nested ({"a": {"b"}}), written as text so that hostile names stay keys. */
function fileText(spec: FileSpec): string {
  if (spec.kind !== "object") return spec.raw;
  const value = (raw: unknown) => JSON.stringify(raw) ?? "null";
  const flat: string[] = [];
  const nested = new Map<string, string[]>();
  for (const [name, raw, asNested] of spec.entries) {
    if (!asNested || !name.includes(".")) {
      flat.push(`${JSON.stringify(name)}: ${value(raw)}`);
      continue;
    }
    const [head, ...rest] = name.split(".");
    nested.set(head as string, [
      ...(nested.get(head as string) ?? []),
      `${JSON.stringify(rest.join("."))}: ${value(raw)}`,
    ]);
  }
  const groups = [...nested].map(([head, inner]) => `${JSON.stringify(head)}: {${inner.join(", ")}}`);
  return `{${[...flat, ...groups].join(", ")}}`;
}

/** A file's settings as the documented rule reads them: nested groups open up into dotted names. */
function leavesOf(name: string, value: unknown): Array<[string, unknown]> {
  const isGroup = typeof value === "object" && value !== null && !Array.isArray(value);
  if (!isGroup || CONFIG_KEY_NAMES.includes(name as ConfigKey)) return [[name, value]];
  return Object.entries(value).flatMap(([key, inner]) => leavesOf(`${name}.${key}`, inner));
}

describe("the config loader under random files and environments", () => {
  it("each key takes the highest layer whose value its type accepts, else the default; one warning per fault", () => {
    const envArb = fc.dictionary(
      fc.constantFrom(...CONFIG_KEY_NAMES.map((name) => CONFIG_KEYS[name].env)),
      fc.oneof(fc.string({ maxLength: 12 }), fc.constantFrom("true", "off", "15000", "0", "auto", " 7 ")),
      { maxKeys: 6 },
    );
    fc.assert(
      fc.property(fileArb, fileArb, envArb, (global, project, environment) => {
        const cwd = mkdtempSync(join(tmpdir(), "pi-cgc-prop-"));
        const agentDir = join(cwd, "agent");
        mkdirSync(agentDir);
        mkdirSync(join(cwd, ".pi"));
        const paths = { global: join(agentDir, "cgc.json"), project: join(cwd, ".pi", "cgc.json") };
        if (global.kind !== "missing") writeFileSync(paths.global, fileText(global));
        if (project.kind !== "missing") writeFileSync(paths.project, fileText(project));
        const env = { ...environment, PI_CODING_AGENT_DIR: agentDir };

        const loaded = loadConfig({ cwd, env });

        // The oracle, written from the rule rather than from the code.
        const expected = defaultConfig() as Record<string, unknown>;
        const sources: Record<string, Source> = {};
        let faults = 0;
        for (const [layer, spec] of [
          ["global", global],
          ["project", project],
        ] as const) {
          if (spec.kind === "malformed" || spec.kind === "not-an-object") faults++;
          // Two spellings of one key in one file (flat and nested) cannot happen here: names are unique.
          // Values as the file holds them: JSON has no -0 or undefined, so they read back as 0 and null.
          const leaves = (spec.kind === "object" ? spec.entries : []).flatMap(([name, value]) =>
            leavesOf(name, JSON.parse(JSON.stringify(value) ?? "null")),
          );
          for (const [name, value] of leaves) {
            const parsed = CONFIG_KEY_NAMES.includes(name as ConfigKey)
              ? CONFIG_KEYS[name as ConfigKey].type.parse(value)
              : undefined;
            if (parsed?.ok) {
              expected[name] = parsed.value;
              sources[name] = { kind: layer, path: paths[layer] };
            } else faults++;
          }
        }
        for (const name of CONFIG_KEY_NAMES) {
          const raw = env[CONFIG_KEYS[name].env as keyof typeof env];
          if (raw === undefined) continue;
          const parsed = CONFIG_KEYS[name].type.parse(raw);
          if (parsed.ok) {
            expected[name] = parsed.value;
            sources[name] = { kind: "env", variable: CONFIG_KEYS[name].env };
          } else faults++;
        }

        expect(loaded.values).toEqual(expected);
        for (const name of CONFIG_KEY_NAMES) expect(loaded.sources[name]).toEqual(sources[name] ?? { kind: "default" });
        expect(loaded.warnings).toHaveLength(faults);
        for (const [layer, spec] of [
          ["global", global],
          ["project", project],
        ] as const) {
          if (spec.kind === "malformed" || spec.kind === "not-an-object") {
            expect(loaded.warnings.filter((warning) => warning.includes(paths[layer]))).toHaveLength(1);
          }
        }
      }),
      { numRuns: 300 },
    );
  });
});

// ---------------------------------------------------------------------------------------------------
// The probe's classification: what a cgc answer may be called

/** Every text the real cgc printed in test/fixtures/cgc/ (stdout and stderr of each capture). */
const CAPTURED = readdirSync(join(PROJECT_ROOT, "test", "fixtures", "cgc"))
  .filter((file) => file.endsWith(".json"))
  .map((file) => {
    const capture = JSON.parse(readFileSync(join(PROJECT_ROOT, "test", "fixtures", "cgc", file), "utf8")) as {
      stdout?: string;
      stderr?: string;
    };
    return { name: file.replace(/\.json$/, ""), text: `${capture.stdout ?? ""}\n${capture.stderr ?? ""}` };
  });

const CODES = ["OK", "FAILED", "TIMEOUT", "CANCELLED", "BUSY", "UNAVAILABLE"] as const;

/**
 * A runner whose calls end as the property says. Stands for any result the real runner can hand the probe
 * (each code has a real-cgc case in test/integration/runner.test.ts and test/reliability/faults.test.ts).
 */
function scriptedRunner(query: Pick<RunResult, "code" | "stdout" | "stderr">): Runner {
  const result = (partial: Pick<RunResult, "code" | "stdout" | "stderr">): RunResult => ({
    argv: ["cgc"],
    exitCode: partial.code === "OK" ? 0 : 1,
    signal: null,
    truncated: false,
    durationMs: 1,
    reason: partial.code === "OK" ? "" : `scripted ${partial.code}`,
    ...partial,
  });
  return {
    run: async (args: string[]) =>
      args[0] === "--version" ? result({ code: "OK", stdout: "", stderr: "CodeGraphContext 0.6.13\n" }) : result(query),
    spawnCount: 0,
  } as unknown as Runner;
}

describe("the probe's verdict on any answer", () => {
  it("corrupt only on a failed call carrying Kùzu's damage words; a lock is busy, a timeout or garbage unknown", async () => {
    const cwd = mkdtempSync(join(tmpdir(), "pi-cgc-probe-"));
    const outputArb = fc.oneof(
      fc.constantFrom(...CAPTURED.map((capture) => capture.text)),
      fc.string({ maxLength: 200 }),
      fc.constant(`[{"path": "${cwd}", "files": 3, "functions": 4, "classes": 1}]\n`),
      fc.constant("[]\n"),
    );
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...CODES), outputArb, outputArb, async (code, stdout, stderr) => {
        const outcome = await probeReadiness({
          runner: scriptedRunner({ code, stdout, stderr }),
          cwd,
          env: { PI_CODING_AGENT_DIR: join(cwd, "agent") },
          knownBackend: null,
          fileDrift: createChangeTracker({ PI_CODING_AGENT_DIR: join(cwd, "agent") }).startDrift,
        });
        const readiness = outcome.verdict.readiness;
        const damage = detectDamagedDatabase(`${stdout}\n${stderr}`);
        if (readiness === "corrupt") expect(code === "FAILED" && damage !== undefined).toBe(true);
        if (code === "FAILED" && damage) expect(readiness).toBe("corrupt");
        if (code === "BUSY") expect(readiness).toBe("busy");
        if (code === "TIMEOUT") expect(readiness).toBe("unknown");
        if (code === "UNAVAILABLE") expect(readiness).toBe("unavailable");
        if (code === "CANCELLED") expect(outcome.settled).toBe(false);
      }),
      { numRuns: 400 },
    );
  });

  it("no captured output of the real cgc reads as both a lock and a damaged database; each only where it was", () => {
    for (const capture of CAPTURED) {
      expect(detectDamagedDatabase(capture.text) !== undefined, capture.name).toBe(capture.name.startsWith("corrupt-"));
      if (detectBusy(capture.text)) expect(capture.name, capture.name).toMatch(/^lock-/);
    }
  });
});

// ---------------------------------------------------------------------------------------------------
// The session's notices: no verdict goes unannounced

/**
 * The notice a probe verdict requires (src/lifecycle/announce.ts, ADR 0004): the user hears of each
 * condition the first time the session meets it. lifecycle.autoCreate is off here, so unindexed is told.
 */
function requiredNotice(verdict: ProbeVerdict): NoticeId {
  switch (verdict.readiness) {
    case "unavailable":
      return "cgc-unavailable";
    case "unindexed":
      return "unindexed";
    case "busy":
      return "busy";
    case "unknown":
      return "probe-unknown";
    case "corrupt":
      return "corrupt";
    case "ready":
      return verdict.drift?.changed ? "drift-detected" : "indexed";
  }
}

describe("the session under random verdict sequences", () => {
  it("shows each verdict's required notice, each condition once, and the chip always renders the state", async () => {
    const queue: ProbeVerdict[] = [];
    vi.resetModules();
    // The probe stands for every verdict the real probe gives (each has a real-cgc case in the suites).
    vi.doMock("../../src/lifecycle/probe.ts", async (importOriginal) => ({
      ...(await importOriginal<typeof import("../../src/lifecycle/probe.ts")>()),
      probeReadiness: async (input: { cwd: string }) => ({
        verdict: queue.shift(),
        root: input.cwd,
        backend: null,
        repositories: [],
        settled: true,
      }),
    }));
    try {
      const { createCgcSession } = await import("../../src/lifecycle/session.ts");
      const verdictArb: fc.Arbitrary<ProbeVerdict> = fc.record({
        readiness: fc.constantFrom(...VERDICT_READINESS),
        reason: fc.constantFrom("a reason", "another reason"),
        drift: fc.option(
          fc.record({ changed: fc.boolean(), paths: fc.constant([]), detail: fc.constant("HEAD moved") }),
          {
            nil: undefined,
          },
        ),
      });
      const cwd = mkdtempSync(join(tmpdir(), "pi-cgc-notices-"));
      await fc.assert(
        fc.asyncProperty(fc.array(verdictArb, { minLength: 1, maxLength: 12 }), async (verdicts) => {
          const shown: string[] = [];
          const chips: Array<string | undefined> = [];
          const ctx = {
            cwd,
            hasUI: true,
            ui: {
              notify: (message: string) => shown.push(message),
              setStatus: (_key: string, text: string | undefined) => chips.push(text),
            },
          } as unknown as ExtensionContext;
          const session = createCgcSession(ctx, {
            env: { PI_CODING_AGENT_DIR: join(cwd, "agent"), CGC_EXECUTABLE: "/nonexistent/cgc" },
          });
          // As the entry does: the chip is the UI's rendering of the session's state.
          const unmount = mountChip(session.store, (text) => ctx.ui.setStatus("cgc", text));
          try {
            for (const verdict of verdicts) {
              queue.push(verdict);
              await session.refresh();
              expect(session.notices.has(requiredNotice(verdict)), JSON.stringify(verdict)).toBe(true);
              expect(chips.at(-1)).toBe(chipText(session.store.get()));
            }
            expect(shown).toEqual([...session.notices.shown().values()]);
            expect(new Set(shown).size).toBe(shown.length);
          } finally {
            unmount();
            await session.dispose();
          }
        }),
        { numRuns: 150 },
      );
    } finally {
      vi.doUnmock("../../src/lifecycle/probe.ts");
      vi.resetModules();
    }
  });
});
