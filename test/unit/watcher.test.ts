// The watcher's gate and liveness verification (ADR 0010) through its seams, without processes:
// each fake stands for a real cgc behaviour named beside it. test/integration/watcher.test.ts runs the
// same matrix with the real cgc, a real FalkorDB server and the real pi.
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { type Backend, DOCTOR_BUDGET_MS, detectCgcBackend, isServerBackend } from "../../src/cgc/backend.ts";
import type { LongLivedHandle, RunOptions, RunResult } from "../../src/cgc/runner.ts";
import { type Config, defaultConfig, parseWatchMode, type WatchMode } from "../../src/config/keys.ts";
import {
  describeWatcher,
  startWatcherIfEnabled,
  type WatcherSeams,
  type WatcherSession,
  watcherOf,
} from "../../src/freshness/watcher.ts";
import {
  changesObserved,
  initialState,
  probeSettled,
  type RepositoryFacts,
  type State,
} from "../../src/state/model.ts";
import { createNoticeLedger } from "../../src/state/notices.ts";
import { createStore } from "../../src/state/store.ts";
import { chipText } from "../../src/ui/chip.ts";
import { PROJECT_ROOT } from "../helpers/cgc-env.ts";

const ROOT = "/work/repo";
const SERVER: Backend = { name: "falkordb-remote", source: "environment (DEFAULT_DATABASE)" };
const EMBEDDED: Backend = { name: "kuzudb", source: "cgc doctor (auto-detect)" };

function deferred<T>() {
  let resolve: (value: T) => void = () => {};
  const promise = new Promise<T>((r) => {
    resolve = r;
  });
  return { promise, resolve };
}

function result(code: RunResult["code"], reason = "", partial: Partial<RunResult> = {}): RunResult {
  return {
    code,
    argv: ["cgc", "watch", ROOT],
    exitCode: code === "OK" ? 0 : null,
    signal: null,
    stdout: "",
    stderr: "",
    truncated: false,
    durationMs: 1,
    reason,
    ...partial,
  };
}

interface Harness {
  session: WatcherSession & { disposed: boolean };
  spawns: Array<{ args: string[]; cwd: string }>;
  /** Ends the spawned watcher with this result (what the runner's `exited` settles with). */
  exit(result: RunResult): void;
  /** The liveness window elapses. */
  windowElapses(): void;
  sleeps: number[];
  detections: number;
  notices: Array<{ message: string; level: string }>;
  seams: WatcherSeams;
  state(): State;
}

interface HarnessOptions {
  mode: WatchMode;
  backend?: Backend | null;
  indexed?: boolean;
  /** Probe verdict; default ready when indexed, unindexed otherwise. */
  readiness?: State["readiness"];
  detected?: Backend | null;
  root?: string;
  worktreeGate?: boolean;
}

function harness(options: HarnessOptions): Harness {
  const root = options.root ?? ROOT;
  const config: Config = { ...defaultConfig(), "freshness.watch": options.mode, "freshness.watcherLivenessMs": 1500 };
  const repositories: RepositoryFacts[] = options.indexed ? [{ path: root, files: 6 }] : [];
  const readiness = options.readiness ?? (options.indexed ? "ready" : "unindexed");
  const store = createStore(
    probeSettled(
      initialState(),
      {
        readiness: readiness === "indexing" ? "unindexed" : readiness,
        reason: "probe",
        drift: readiness === "ready" ? { changed: false, paths: [], detail: "" } : undefined,
      },
      0,
    ),
  );
  const notices: Array<{ message: string; level: string }> = [];
  const spawns: Array<{ args: string[]; cwd: string }> = [];
  const exited = deferred<RunResult>();
  const window = deferred<void>();
  const h: Harness = {
    spawns,
    notices,
    sleeps: [],
    detections: 0,
    exit: (r) => exited.resolve(r),
    windowElapses: () => window.resolve(),
    state: () => store.get(),
    seams: {
      sleep: (ms) => {
        h.sleeps.push(ms);
        return window.promise;
      },
      detectBackend: async () => {
        h.detections++;
        return options.detected ?? null;
      },
      worktreeGate: () => options.worktreeGate ?? true,
    },
    session: {
      root,
      // pi's agent directory for pi-cgc's records (the watcher's write window), never the user's.
      env: { PI_CODING_AGENT_DIR: mkdtempSync(join(tmpdir(), "pi-cgc-watcher-agent-")) },
      disposed: false,
      store,
      // What the tracker's look finds when the watcher dies: one file changed while it watched.
      tracker: { check: () => [`${root}/changed-while-watched.py`] },
      repositories,
      backend: options.backend,
      notices: createNoticeLedger({
        hasUI: true,
        notify: (message, level) => notices.push({ message, level }),
        stderr: () => {},
      }),
      config: () => config,
      runner: {
        run: async () => {
          throw new Error("the watcher gate runs no bounded cgc call of its own");
        },
        // Stands for runner.startLongLived spawning `cgc watch <root>`: the real watcher runs until stopped,
        // and says that it watches (test/fixtures/cgc/watch-kuzudb.json).
        startLongLived: (args: string[], opts: { cwd: string; onLine?: RunOptions["onLine"] }) => {
          spawns.push({ args, cwd: opts.cwd });
          opts.onLine?.("👀 Monitoring for file changes... (Press Ctrl+C to stop)", "stdout");
          const handle: LongLivedHandle & { child: undefined } = {
            pid: 4242,
            child: undefined,
            exited: exited.promise,
            leaveLiteTurn: () => {},
            stop: async () => {
              exited.resolve(result("CANCELLED", "cgc watch was stopped"));
            },
          };
          return handle;
        },
      },
    },
  };
  return h;
}

/** Lets every pending promise reaction run (the start is fire-and-forget). */
const settledTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

const ids = (h: Harness) => h.notices.map((notice) => notice.message);

describe("the watcher's gate (D3)", () => {
  it("auto + server backend + indexed workspace: spawns `cgc watch <root>` in the root", async () => {
    const h = harness({ mode: "auto", backend: SERVER, indexed: true });
    const watcher = startWatcherIfEnabled(h.session, h.seams);
    await settledTurn();
    expect(h.spawns).toEqual([{ args: ["watch", ROOT], cwd: ROOT }]);
    expect(watcher.record.phase).toBe("verifying");
    expect(watcher.record.pid).toBe(4242);
    expect(h.detections).toBe(0); // the session already held the backend: no second detection
  });

  it("auto + embedded backend: no spawn, the embedded notice naming the backend and the `on` escape hatch", async () => {
    const h = harness({ mode: "auto", backend: EMBEDDED, indexed: true });
    const record = await startWatcherIfEnabled(h.session, h.seams).started;
    expect(h.spawns).toEqual([]);
    expect(record.phase).toBe("declined-backend");
    expect(ids(h)).toEqual([expect.stringMatching(/kuzudb.*not a server backend.*freshness\.watch to on/)]);
    expect(h.notices[0]?.level).toBe("info");
  });

  it("auto + unknown backend (detection found nothing): conservative, no spawn", async () => {
    const h = harness({ mode: "auto", backend: null, indexed: true });
    const record = await startWatcherIfEnabled(h.session, h.seams).started;
    expect(h.spawns).toEqual([]);
    expect(record.phase).toBe("declined-backend");
    expect(ids(h)).toEqual([expect.stringContaining("backend is unknown")]);
  });

  it("auto + server backend + unindexed workspace: no spawn, no index, the unindexed notice", async () => {
    const h = harness({ mode: "auto", backend: SERVER, indexed: false });
    const record = await startWatcherIfEnabled(h.session, h.seams).started;
    expect(h.spawns).toEqual([]);
    expect(record.phase).toBe("declined-unindexed");
    expect(ids(h)).toEqual([expect.stringMatching(/graph holds no index for \/work\/repo.*\/cgc index/)]);
  });

  it("auto asks the graph, not readiness alone: a probe that could not answer is not an index", async () => {
    const h = harness({ mode: "auto", backend: SERVER, indexed: false, readiness: "unknown" });
    await startWatcherIfEnabled(h.session, h.seams).started;
    expect(h.spawns).toEqual([]);
    expect(ids(h)).toEqual([expect.stringContaining("(cgc is unknown: probe)")]);
  });

  it("auto without a detected backend in the session detects once, then spawns on a server", async () => {
    const h = harness({ mode: "auto", backend: undefined, detected: SERVER, indexed: true });
    const watcher = startWatcherIfEnabled(h.session, h.seams);
    await settledTurn();
    expect(watcher.record.phase).toBe("verifying");
    expect(h.detections).toBe(1);
    expect(h.spawns).toHaveLength(1);
  });

  it("on: spawns on an embedded backend and an unindexed workspace, with no detection", async () => {
    for (const [backend, indexed] of [
      [EMBEDDED, false],
      [null, true],
      [undefined, true],
    ] as const) {
      const h = harness({ mode: "on", backend, indexed });
      startWatcherIfEnabled(h.session, h.seams);
      await settledTurn();
      expect(h.spawns).toHaveLength(1);
      expect(h.detections).toBe(0);
      expect(h.notices).toEqual([]);
    }
  });

  it("off: nothing at all — no detection, no spawn, no notice, no state change", async () => {
    const h = harness({ mode: "off", backend: undefined, detected: SERVER, indexed: true });
    const before = h.state();
    const record = await startWatcherIfEnabled(h.session, h.seams).started;
    expect(record.phase).toBe("off");
    expect(h.detections).toBe(0);
    expect(h.spawns).toEqual([]);
    expect(h.notices).toEqual([]);
    expect(h.state()).toBe(before);
  });

  it("booleans behave exactly as on/off (the key's parser is the only mapping)", async () => {
    for (const [raw, spawns] of [
      [true, 1],
      ["true", 1],
      [" YES ", 1],
      [false, 0],
      ["false", 0],
      ["0", 0],
    ] as const) {
      const parsed = parseWatchMode(raw);
      if (!parsed.ok) throw new Error(parsed.error);
      const h = harness({ mode: parsed.value, backend: EMBEDDED, indexed: true });
      startWatcherIfEnabled(h.session, h.seams);
      await settledTurn();
      expect(h.spawns).toHaveLength(spawns);
      expect(h.detections).toBe(0);
    }
  });

  it("no workspace, cgc unavailable, or the worktree gate: nothing, in any mode", async () => {
    const cases: HarnessOptions[] = [
      { mode: "on", root: "" },
      { mode: "on", readiness: "unavailable" },
      { mode: "on", worktreeGate: false },
      { mode: "auto", backend: SERVER, indexed: true, worktreeGate: false },
    ];
    for (const options of cases) {
      const h = harness(options);
      const record = await startWatcherIfEnabled(h.session, h.seams).started;
      expect(record.phase).toBe("blocked");
      expect(h.spawns).toEqual([]);
      expect(h.detections).toBe(0);
      expect(h.notices).toEqual([]);
    }
  });
});

describe("liveness verification (D4)", () => {
  it("verified: fresh only once the window elapsed with the watcher alive, shown as watched, then the watcher-started notice", async () => {
    const h = harness({ mode: "auto", backend: SERVER, indexed: true });
    const verifiedBefore = h.state().verifiedAt ?? 0;
    const watcher = startWatcherIfEnabled(h.session, h.seams);
    await settledTurn();
    expect(h.sleeps).toEqual([1500]);
    expect(watcher.active).toBe(false);
    expect(h.notices).toEqual([]);
    h.windowElapses();
    const record = await watcher.started;
    expect(record.phase).toBe("watching");
    expect(watcher.active).toBe(true);
    expect(h.state().freshness).toBe("fresh");
    expect(h.state().keptByWatcher).toBe(true);
    expect(chipText(h.state())).toBe("cgc ready · watched");
    expect(h.state().verifiedAt).toBeGreaterThanOrEqual(verifiedBefore);
    expect(ids(h)).toEqual([
      expect.stringMatching(
        /cgc watch is following the changes to \/work\/repo \(pid 4242.*not checked against a full index/,
      ),
    ]);
    expect(describeWatcher("auto", watcherOf(h.session))).toMatch(/^auto — pid 4242, watching since .*1500 ms/);
  });

  it("verified with drift from before it attached: the drift stays possibly stale (the watcher sees future changes only)", async () => {
    const h = harness({ mode: "on", backend: SERVER, indexed: true });
    h.session.store.apply((state) => changesObserved(state, [`${ROOT}/a.py`]));
    const watcher = startWatcherIfEnabled(h.session, h.seams);
    h.windowElapses();
    await watcher.started;
    expect(watcher.active).toBe(true);
    expect(h.state().freshness).toBe("possibly-stale");
    expect(h.state().changedPaths).toEqual([`${ROOT}/a.py`]);
  });

  it("a watcher that exits inside the window: possibly stale with the error, the warning, never fresh", async () => {
    const h = harness({ mode: "on", backend: EMBEDDED, indexed: true });
    const seen: State["freshness"][] = [];
    h.session.store.subscribe((state) => seen.push(state.freshness));
    const watcher = startWatcherIfEnabled(h.session, h.seams);
    // Stands for the real `cgc watch` that prints "An error occurred: …" and exits 0 two seconds in
    // (an undecodable .cgcignore): the runner classifies a long-lived child's own exit as FAILED.
    h.exit(result("FAILED", "An error occurred: 'utf-8' codec can't decode byte 0xff in position 0"));
    const record = await watcher.started;
    expect(record.phase).toBe("not-verified");
    expect(watcher.active).toBe(false);
    expect(h.state().freshness).toBe("possibly-stale");
    expect(h.state().lastError).toMatch(/exited within its 1500 ms liveness window \(FAILED\): An error occurred/);
    expect(seen).not.toContain("fresh");
    expect(h.notices).toEqual([
      { message: expect.stringMatching(/liveness window.*possibly stale.*\/cgc sync/), level: "warning" },
    ]);
    h.windowElapses(); // a late window changes nothing
    await settledTurn();
    expect(h.state().freshness).toBe("possibly-stale");
    expect(watcher.record.phase).toBe("not-verified");
  });

  it("BUSY (another process holds the lock): the skipped-busy notice and the store untouched", async () => {
    const h = harness({ mode: "on", backend: EMBEDDED, indexed: true });
    const before = h.state();
    const watcher = startWatcherIfEnabled(h.session, h.seams);
    // Stands for `cgc watch` meeting the Kùzu lock ("Another CGC process already has this embedded database open").
    h.exit(result("BUSY", "another cgc process holds the embedded database lock"));
    const record = await watcher.finished;
    expect(record.phase).toBe("busy");
    expect(h.state()).toBe(before);
    expect(h.notices).toEqual([{ message: expect.stringContaining("cgc watch skipped"), level: "warning" }]);
  });

  it("teardown (CANCELLED) records nothing, inside or after the window", async () => {
    for (const after of [false, true]) {
      const h = harness({ mode: "on", backend: EMBEDDED, indexed: true });
      const watcher = startWatcherIfEnabled(h.session, h.seams);
      if (after) {
        h.windowElapses();
        await watcher.started;
      }
      const before = h.state();
      const noticesBefore = h.notices.length;
      h.session.disposed = true;
      h.exit(result("CANCELLED", "cgc watch was stopped"));
      const record = await watcher.finished;
      expect(record.phase).toBe("stopped");
      expect(h.state()).toBe(before);
      expect(h.notices).toHaveLength(noticesBefore);
    }
  });

  it("death after verification: the error is recorded and the lazy path takes over", async () => {
    const h = harness({ mode: "auto", backend: SERVER, indexed: true });
    const watcher = startWatcherIfEnabled(h.session, h.seams);
    h.windowElapses();
    await watcher.started;
    expect(watcher.active).toBe(true);
    // Stands for a verified watcher whose server went away (FalkorDB stopped under it).
    h.exit(result("FAILED", "Database Connection Error: Error 111 connecting to 127.0.0.1:1. Connection refused."));
    const record = await watcher.finished;
    expect(record.phase).toBe("died");
    expect(watcher.active).toBe(false);
    expect(h.state().lastError).toMatch(/cgc watch stopped \(FAILED\): Database Connection Error/);
    expect(h.state().freshness).toBe("possibly-stale");
    expect(h.state().changedPaths).toEqual([`${ROOT}/changed-while-watched.py`]);
    expect(chipText(h.state())).toBe("cgc ready · possibly stale");
    expect(h.notices).toHaveLength(1); // only watcher-started
  });

  it("the engine is told at the spawn that the graph is no longer its model; a death with nothing changed is fresh again", async () => {
    const h = harness({ mode: "auto", backend: SERVER, indexed: true });
    let written = 0;
    Object.assign(h.session, { tracker: { check: () => [] } }); // nothing changed while it watched: it wrote nothing
    const watcher = startWatcherIfEnabled(h.session, { ...h.seams, graphWritten: () => written++ });
    await settledTurn();
    expect(written).toBe(1);
    h.windowElapses();
    await watcher.started;
    expect(chipText(h.state())).toBe("cgc ready · watched");
    h.exit(result("FAILED", "Database Connection Error: Error 111 connecting to 127.0.0.1:1. Connection refused."));
    await watcher.finished;
    expect(h.state().keptByWatcher).toBeUndefined();
    expect(chipText(h.state())).toBe("cgc ready · fresh");
  });

  it("notices are once per session: a second start on the same session shows nothing new", async () => {
    const h = harness({ mode: "auto", backend: EMBEDDED, indexed: true });
    await startWatcherIfEnabled(h.session, h.seams).started;
    await startWatcherIfEnabled(h.session, h.seams).started;
    expect(h.notices).toHaveLength(1);
  });
});

describe("backend detection (D2)", () => {
  interface Capture {
    exitCode: number;
    stdout: string;
    stderr: string;
  }
  const capture = (name: string): Capture =>
    JSON.parse(readFileSync(join(PROJECT_ROOT, "test", "fixtures", "cgc", `${name}.json`), "utf8")) as Capture;
  /** Stands for runner.run(["doctor"]) answering with a recorded real `cgc doctor` (classified as the runner does). */
  const doctorRunner = (answer: RunResult | Capture, calls: RunOptions[] = []) => ({
    run: async (args: string[], options: RunOptions): Promise<RunResult> => {
      expect(args).toEqual(["doctor"]);
      calls.push(options);
      if ("code" in answer) return answer;
      return result(answer.exitCode === 0 ? "OK" : "FAILED", answer.exitCode === 0 ? "" : "doctor reported issues", {
        exitCode: answer.exitCode,
        stdout: answer.stdout,
        stderr: answer.stderr,
      });
    },
  });
  const homeWith = (dotenv?: string) => {
    const home = mkdtempSync(join(tmpdir(), "pi-cgc-detect-"));
    if (dotenv !== undefined) {
      mkdirSync(join(home, ".codegraphcontext"), { recursive: true });
      writeFileSync(join(home, ".codegraphcontext", ".env"), dotenv);
    }
    return home;
  };

  it("environment first, in cgc's order, lowercased, without spawning", async () => {
    const runner = doctorRunner(result("FAILED", "must not run"));
    const detect = (env: NodeJS.ProcessEnv) => detectCgcBackend({ env, runner, cwd: ROOT, homeDir: homeWith() });
    expect(await detect({ CGC_RUNTIME_DB_TYPE: "Neo4j", DATABASE_TYPE: "kuzudb", DEFAULT_DATABASE: "kuzudb" })).toEqual(
      {
        name: "neo4j",
        source: "environment (CGC_RUNTIME_DB_TYPE)",
      },
    );
    expect(await detect({ DATABASE_TYPE: "FALKORDB-REMOTE", DEFAULT_DATABASE: "kuzudb" })).toEqual({
      name: "falkordb-remote",
      source: "environment (DATABASE_TYPE)",
    });
    expect((await detect({ DEFAULT_DATABASE: " kuzudb " }))?.name).toBe("kuzudb");
  });

  it("then `cgc doctor`'s Default database line, under the 5 s budget, without the lock", async () => {
    const calls: RunOptions[] = [];
    const backend = await detectCgcBackend({
      env: {},
      homeDir: homeWith("DEFAULT_DATABASE=neo4j\n"),
      runner: doctorRunner(capture("doctor-kuzudb"), calls),
      cwd: ROOT,
    });
    expect(backend).toEqual({ name: "kuzudb", source: "cgc doctor (environment (default_database))" });
    expect(calls).toEqual([expect.objectContaining({ kind: "probe", takesLock: false, budgetMs: DOCTOR_BUDGET_MS })]);
  });

  it("a doctor that fails (exit 1, timeout, no line) falls through to ~/.codegraphcontext/.env", async () => {
    const home = homeWith(
      '# CodeGraphContext Configuration\nFALKORDB_PORT=\nexport DEFAULT_DATABASE="FalkorDB-Remote"\n',
    );
    for (const answer of [
      capture("doctor-default"), // the real exit 1 on this machine's unusable falkordb default
      result("TIMEOUT", "cgc doctor took longer than 5000 ms and was stopped"),
      result("OK", "", { stdout: "🏥 Running CodeGraphContext Diagnostics...\n" }),
    ]) {
      expect(await detectCgcBackend({ env: {}, homeDir: home, runner: doctorRunner(answer), cwd: ROOT })).toEqual({
        name: "falkordb-remote",
        source: "~/.codegraphcontext/.env (DEFAULT_DATABASE)",
      });
    }
    const both = homeWith("DEFAULT_DATABASE=kuzudb\nDATABASE_TYPE='neo4j'\n");
    expect((await detectCgcBackend({ env: {}, homeDir: both, cwd: ROOT }))?.name).toBe("neo4j");
  });

  it("without a cgc config (.env) doctor is not asked: it would write one and report its own write", async () => {
    const calls: RunOptions[] = [];
    const home = homeWith();
    const backend = await detectCgcBackend({
      env: {},
      homeDir: home,
      runner: doctorRunner(capture("doctor-kuzudb"), calls),
      cwd: ROOT,
    });
    expect(calls).toEqual([]);
    expect(backend).toBeNull();
  });

  it("fails open: nothing anywhere is null, and null is not a server", async () => {
    const backend = await detectCgcBackend({
      env: {},
      homeDir: homeWith(),
      runner: doctorRunner(result("UNAVAILABLE", "cannot run cgc")),
      cwd: ROOT,
    });
    expect(backend).toBeNull();
    expect(isServerBackend(backend?.name)).toBe(false);
  });

  it("only neo4j and falkordb-remote are servers", () => {
    expect(["neo4j", "falkordb-remote"].every(isServerBackend)).toBe(true);
    for (const name of ["kuzudb", "falkordb", "ladybugdb", "nornic", "unknown", "", null, undefined]) {
      expect(isServerBackend(name)).toBe(false);
    }
  });
});
