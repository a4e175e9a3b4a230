// The incremental engine in a real session (real pi with the faux model, real cgc, the engine under cgc's
// own Python): an edit reaches the graph while the agent works, a graph tool called in the same run sees
// it, and the chip goes possibly stale → fresh without a full rebuild. Where the engine cannot be trusted
// (another cgc version, a crash mid-update) the full rebuild takes over, with one notice, and nothing is
// called fresh that is not.
import { spawnSync } from "node:child_process";
import { appendFileSync, existsSync, readdirSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fauxAssistantMessage, fauxToolCall } from "@mariozechner/pi-ai";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { createRunner } from "../../src/cgc/runner.ts";
import { startEngine } from "../../src/freshness/engine.ts";
import { startBackend } from "../helpers/backends.ts";
import { type CgcHome, cgcBinary, cgcExec, cgcStart, childEnv, makeCgcHome, PROJECT_ROOT } from "../helpers/cgc-env.ts";
import { FAULT_ENGINE, venvPython } from "../helpers/engine.ts";
import { restoreEnv, restoreSuiteEnv, suiteEnv, withEnv } from "../helpers/env.ts";
import { compareWithFullIndexInNewHome } from "../helpers/graph-parity.ts";
import { NUL_DOCSTRINGS } from "../helpers/index-parity.ts";
import { cgcStatus, type PiHarness, recordingUi, startPi, toolResults, waitFor } from "../helpers/pi-sdk.ts";
import { caseRepos, type TinyRepo } from "../helpers/repos.ts";
import { FAKES, processesOf, stopOwnCgc, writeSlowToIndexFile } from "../reliability/support.ts";

const ENGINE_SCRIPT = join(PROJECT_ROOT, "engine", "pi-cgc-engine.py");

let home: CgcHome;
const harnesses: PiHarness[] = [];
/** What a case made beside its repositories (a HOME of its own), removed after it. */
const cleanups: (() => void)[] = [];
const repos = caseRepos();

beforeAll(() => {
  home = makeCgcHome();
  suiteEnv({ HOME: home.home });
});
afterEach(async () => {
  for (const h of harnesses.splice(0)) await h.dispose();
  for (const cleanup of cleanups.splice(0)) cleanup();
  repos.cleanup();
  restoreEnv();
});
afterAll(() => {
  restoreSuiteEnv();
  home.cleanup();
});

async function readySession(repo: TinyRepo, executable = cgcBinary()) {
  withEnv({ CGC_EXECUTABLE: executable });
  const ui = recordingUi();
  const h = await startPi({ cwd: repo.path, ui });
  harnesses.push(h);
  const chip = () => ui.statuses.get("cgc");
  await waitFor(() => chip() === "cgc ready · fresh", "a fresh, ready graph", 300_000);
  const status = () => cgcStatus(h);
  return { h, ui, chip, status, notices: () => ui.notices.map((notice) => notice.message) };
}

/** `cgc watch <root>` with cgc's own log at INFO (its CLI leaves logging at WARNING), as engine/parity.py runs it. */
const WATCH_WITH_LOG = [
  "import logging, sys",
  "logging.basicConfig(level=logging.INFO, stream=sys.stderr)",
  "sys.argv = ['cgc', 'watch', sys.argv[1]]",
  "from codegraphcontext.cli.main import app",
  "sys.exit(app())",
].join("\n");

/** The `name` column of a Cypher query on the repo's graph, sorted. */
async function names(repo: TinyRepo, cypher: string, env = home.env): Promise<string[]> {
  const result = await cgcExec(["query", cypher], { cwd: repo.path, env });
  return [...result.stdout.matchAll(/"name": "([^"]+)"/g)].map((match) => match[1] as string).sort();
}

function functionNames(repo: TinyRepo, file: string, env = home.env): Promise<string[]> {
  return names(repo, `MATCH (f:Function) WHERE f.path = '${join(repo.path, file)}' RETURN f.name AS name`, env);
}

const addCaller = fauxToolCall("edit", {
  path: "pkg/text.py",
  edits: [
    {
      oldText: "def orphan(value):",
      newText: "def engine_caller(value):\n    return normalize(value)\n\n\ndef orphan(value):",
    },
  ],
});

/** The caller addCaller added, renamed. */
const renameCaller = fauxToolCall("edit", {
  path: "pkg/text.py",
  edits: [{ oldText: "def engine_caller(value):", newText: "def engine_caller_renamed(value):" }],
});

/** A first edit (a new caller of normalize) starts the session's engine; returns once it made the graph fresh. */
async function engineUp(s: Awaited<ReturnType<typeof readySession>>): Promise<void> {
  s.h.faux.setResponses([fauxAssistantMessage(addCaller, { stopReason: "toolUse" }), fauxAssistantMessage("done")]);
  await s.h.session.prompt("add a caller");
  await waitFor(() => s.chip() === "cgc ready · fresh", "fresh after the first update", 60_000);
}

/** Engines of the indexed `repo` started by hand (no pi), on the cache folder `cacheName` of the test's home. */
function engines(repo: TinyRepo, cacheName: string) {
  const root = realpathSync(repo.path);
  const cacheDir = join(home.home, cacheName);
  const runner = createRunner({
    executable: cgcBinary(),
    env: { ...process.env, ...home.env },
    budgets: { probe: 60_000, query: 60_000, maintenance: 120_000, longLived: 0 },
  });
  const launch = (faults: string[] = []) =>
    startEngine({
      runner,
      python: venvPython(),
      root,
      cacheDir,
      startBudgetMs: 120_000,
      holdMs: 200,
      env: { ...process.env, ...home.env } as Record<string, string>,
      ...(faults.length > 0 ? { program: [FAULT_ENGINE, ...faults] } : {}),
    });
  return { root, cacheDir, launch };
}

describe("the incremental engine", () => {
  it("an edit, then a graph tool in the same run: the answer has the edit; fresh without a full rebuild", async () => {
    const repo = await repos.indexed(home.env);
    const s = await readySession(repo);
    // cgc's own index wrote the graph, so the engine has no model of it: it starts with the session and compares.
    await waitFor(
      async () =>
        /engine: {5}ready — .*graph adopted in \d+ ms \(nothing differed from a full index\)/.test(await s.status()),
      "the graph cgc wrote adopted, nothing written",
      120_000,
      500,
    );
    s.h.faux.setResponses([
      fauxAssistantMessage(addCaller, { stopReason: "toolUse" }),
      fauxAssistantMessage(fauxToolCall("cgc_relations", { relation: "callers", target: "normalize" }), {
        stopReason: "toolUse",
      }),
      fauxAssistantMessage("done"),
    ]);
    const from = s.h.session.messages.length;
    await s.h.session.prompt("add a caller of normalize, then list its callers");
    const answer = toolResults(s.h, from).find((result) => result.name === "cgc_relations");
    expect(answer?.isError).toBe(false);
    expect(answer?.text).toMatch(/engine_caller/);
    expect(answer?.text).not.toMatch(/Not in this answer yet/);
    await waitFor(() => s.chip() === "cgc ready · fresh", "fresh after the update", 30_000);
    expect(s.ui.statusHistory).toContain("cgc ready · possibly stale");
    expect(s.ui.statusHistory.filter((text) => /^cgc (syncing|rebuilding|indexing)…/.test(text ?? ""))).toEqual([]);
    expect(await s.status()).toMatch(
      /engine: {5}ready — cgc 0\.6\.13, kuzudb, \d+ files, .*last update: 1 file in \d+ ms/,
    );
    expect(s.notices().filter((message) => /incremental engine/.test(message))).toEqual([]);
    expect(await functionNames(repo, "pkg/text.py")).toContain("engine_caller");
  });

  it("after pi-cgc's own index the engine takes that graph as its model: no first edit rewrites other files' links", async () => {
    withEnv({ CGC_LIFECYCLE_AUTO_CREATE: "true" });
    const repo = repos.tiny();
    const first = await readySession(repo);
    expect(first.ui.statusHistory).toContainEqual(expect.stringMatching(/^cgc indexing…/));
    // Started by the index, not by an edit: the tree it reads is the one the graph was just built from.
    await waitFor(
      async () => /engine: {5}ready/.test(await first.status()),
      "the engine up after the index",
      60_000,
      500,
    );
    // pi-cgc's own index left the engine's cache as the graph's model: the engine started from it, parsing nothing.
    expect(await first.status()).toMatch(/engine: {5}ready — .*, started in [\d.]+ s \(warm\)/);
    first.h.faux.setResponses([
      fauxAssistantMessage(addCaller, { stopReason: "toolUse" }),
      fauxAssistantMessage("done"),
    ]);
    await first.h.session.prompt("add a caller of normalize");
    await waitFor(() => first.chip() === "cgc ready · fresh", "fresh after the update", 30_000);
    // An engine that could not know what the graph held would have rewritten the links of all four others.
    expect(await first.status()).toMatch(
      /last update: 1 file in \d+ ms \(database held \d+ ms; links of 0 other files rewritten(; written in bulk)?\)/,
    );
    expect(await functionNames(repo, "pkg/text.py")).toContain("engine_caller");
    await harnesses.splice(harnesses.indexOf(first.h), 1)[0]?.dispose();

    // The next session's engine starts from the cache the last one saved: the graph's model still.
    const next = await readySession(repo);
    next.h.faux.setResponses([
      fauxAssistantMessage(renameCaller, { stopReason: "toolUse" }),
      fauxAssistantMessage("done"),
    ]);
    await next.h.session.prompt("rename it");
    await waitFor(() => next.chip() === "cgc ready · fresh", "fresh after the next session's update", 60_000);
    expect(await next.status()).toMatch(/\(warm\); last update: 1 file .*links of 0 other files rewritten/);
    expect(await functionNames(repo, "pkg/text.py")).toContain("engine_caller_renamed");
    expect(next.ui.statusHistory.filter((text) => /^cgc (syncing|rebuilding|indexing)…/.test(text ?? ""))).toEqual([]);
  });

  it("a large graph written elsewhere, on KùzuDB, is adopted by difference as the session starts: nothing written, and the first edit is an ordinary update", async () => {
    // 10 more files of 100 functions, each making 100 calls of a name defined nowhere: 100 000 calls of 1 000
    // functions, the engine's REBUILD_RATHER_FROM (100 million calls times functions). An engine that could not
    // compare the graph wrote every file's links again at its first edit, or here handed it to a full index; cgc
    // parses these calls and resolves none, so its own index of the tree (the parity check below) takes about 45 s.
    const repo = repos.tiny();
    const calls = "    undefined_helper(value)\n".repeat(100);
    for (let i = 0; i < 10; i++) {
      const functions = Array.from(
        { length: 100 },
        (_, j) => `def generated_${i}_${j}(value):\n${calls}    return value\n`,
      );
      writeFileSync(join(repo.path, "pkg", `generated_${i}.py`), functions.join("\n\n"));
    }
    // A database of its own: where another repository's nodes are in it, pi-cgc's full index writes with cgc's own
    // writer instead of in bulk (minutes for this tree, not seconds).
    const own = makeCgcHome();
    cleanups.push(own.cleanup);
    withEnv({ HOME: own.home });
    // The graph written outside this session: pi-cgc's index script run by hand leaves no engine cache here, so the
    // session's engine has no model of what the graph holds.
    const indexed = spawnSync(venvPython(), [ENGINE_SCRIPT, "index", repo.path], {
      env: childEnv(own.env),
      encoding: "utf8",
      timeout: 900_000,
    });
    expect(indexed.status, indexed.stderr).toBe(0);
    expect(indexed.stdout).toMatch(/written with bulk\)/);
    const s = await readySession(repo);
    await waitFor(
      async () => /graph adopted in \d+ ms \(nothing differed from a full index\)/.test(await s.status()),
      "the graph adopted, nothing written",
      600_000,
      500,
    );
    s.h.faux.setResponses([fauxAssistantMessage(addCaller, { stopReason: "toolUse" }), fauxAssistantMessage("done")]);
    await s.h.session.prompt("add a caller");
    await waitFor(
      async () => /last update: 1 file .*links of 0 other files rewritten/.test(await s.status()),
      "the engine's ordinary update",
      300_000,
      500,
    );
    await waitFor(() => s.chip() === "cgc ready · fresh", "fresh after the update", 300_000);
    expect(s.ui.statusHistory.filter((text) => /^cgc (syncing|rebuilding|indexing)…/.test(text ?? ""))).toEqual([]);
    expect(await functionNames(repo, "pkg/text.py", own.env)).toContain("engine_caller");
    const { missing, extra } = await compareWithFullIndexInNewHome(repo.path, own.env);
    expect({ missing, extra }).toEqual({ missing: [], extra: [] });
  }, 2_400_000);

  it("a line added to .cgcignore by a shell command takes the folder's file out of the graph; removed, puts it back", async () => {
    const repo = await repos.indexed(home.env);
    const s = await readySession(repo);
    const ignore = (command: string) =>
      fauxAssistantMessage(fauxToolCall("bash", { command }), { stopReason: "toolUse" });
    s.h.faux.setResponses([ignore("printf 'pkg/beta.py\\n' >> .cgcignore"), fauxAssistantMessage("done")]);
    await s.h.session.prompt("stop indexing beta");
    await waitFor(() => s.chip() === "cgc ready · fresh", "fresh after the update", 60_000);
    expect(await functionNames(repo, "pkg/beta.py")).toEqual([]);
    expect(await functionNames(repo, "pkg/alpha.py")).not.toEqual([]);
    s.h.faux.setResponses([ignore("sed -i '/pkg\\/beta.py/d' .cgcignore"), fauxAssistantMessage("done")]);
    await s.h.session.prompt("index beta again");
    await waitFor(() => s.chip() === "cgc ready · fresh", "fresh after the second update", 60_000);
    expect(await functionNames(repo, "pkg/beta.py")).not.toEqual([]);
    expect(s.ui.statusHistory.filter((text) => /^cgc (syncing|rebuilding|indexing)…/.test(text ?? ""))).toEqual([]);
  });

  it("a user's own cgc watch held the database and wrote the agent's edit: the engine's next update writes every file's links, and the graph equals a full index", async () => {
    const repo = await repos.indexed(home.env);
    const s = await readySession(repo);
    await engineUp(s); // its cache the graph's model

    // The user's own `cgc watch` in a terminal, its log at INFO (to say when it wrote a change): it holds
    // KùzuDB's lock, writes the agent's next edit itself, and leaves no stamp on the graph for it.
    const theirs = cgcStart(["-c", WATCH_WITH_LOG, repo.path], {
      cwd: repo.path,
      env: { ...home.env, ENABLE_APP_LOGS: "INFO", PYTHONUNBUFFERED: "1" },
      cgc: join(dirname(cgcBinary()), "python"),
    });
    try {
      await theirs.waitForLine("stdout", /Monitoring for file changes/);
      const casefold = fauxToolCall("edit", {
        path: "pkg/text.py",
        edits: [{ oldText: "return value.strip().lower()", newText: "return value.strip().casefold()" }],
      });
      s.h.faux.setResponses([fauxAssistantMessage(casefold, { stopReason: "toolUse" }), fauxAssistantMessage("done")]);
      await s.h.session.prompt("use casefold");
      await theirs.waitForLine("stderr", /Graph refresh for .*text\.py complete/);
      await waitFor(
        () => s.notices().some((message) => /^cgc update skipped: another cgc process holds/.test(message)),
        "the engine's update skipped on the lock",
        90_000,
      );
    } finally {
      await stopOwnCgc(theirs);
    }
    // The lock is free: the user syncs, and the engine's update is the one that makes the graph fresh.
    await s.h.session.prompt("/cgc status");
    await waitFor(() => /^cgc ready/.test(s.chip() ?? ""), "ready after the re-check", 60_000);
    await s.h.session.prompt("/cgc sync");
    await waitFor(() => s.chip() === "cgc ready · fresh", "fresh after the update", 120_000);
    const { missing, extra } = await compareWithFullIndexInNewHome(repo.path, home.env);
    expect({ missing, extra }).toEqual({ missing: [], extra: [] });
    expect(await s.status()).toMatch(/last update: .*links of [1-9]\d* other files? rewritten/);
  }, 300_000);

  it("a cgc version the engine was not proven on: one notice, then full rebuilds keep the graph honest", async () => {
    const repo = await repos.indexed(home.env);
    const s = await readySession(repo, join(FAKES, "cgc-other-version"));
    s.h.faux.setResponses([fauxAssistantMessage(addCaller, { stopReason: "toolUse" }), fauxAssistantMessage("done")]);
    await s.h.session.prompt("add a caller");
    expect(s.chip()).toBe("cgc ready · possibly stale");
    await waitFor(() => s.chip() === "cgc ready · fresh", "fresh after the full rebuild", 120_000);
    expect(s.ui.statusHistory).toContainEqual(expect.stringMatching(/^cgc syncing…/));
    expect(s.notices().filter((message) => /incremental engine/.test(message))).toEqual([
      expect.stringMatching(
        /engine is not used: it was proven on cgc 0\.6\.13, this is cgc 0\.7\.0; each sync is a full rebuild/,
      ),
    ]);
    expect(await s.status()).toMatch(/engine: {5}not used: it was proven on cgc 0\.6\.13, this is cgc 0\.7\.0/);
    expect(await functionNames(repo, "pkg/text.py")).toContain("engine_caller");
  });

  it("the engine killed mid-update after the turn's quiet moment: one notice, nothing fresh until the full rebuild, then a right graph", async () => {
    const repo = await repos.indexed(home.env);
    const s = await readySession(repo);
    // The engine up first, so that the next update begins at once, before the quiet moment after the turn
    // (1.5 s) that would otherwise start the sync the update joins.
    await engineUp(s);
    // A file the engine needs seconds for keeps the update running long enough to kill it: 32 000 calls, each
    // looked up among 4 000 functions by cgc's resolution (about 13 s; the file's rows then go in bulk in 1-2 s).
    writeSlowToIndexFile(join(repo.path, "pkg", "generated.py"), 4_000, 8);
    s.h.faux.setResponses([fauxAssistantMessage("first")]);
    await s.h.session.prompt("look around"); // the turn-boundary check sees the new file
    // Killed once the quiet moment has passed during the update: no turn's end is left to start the full
    // rebuild; the failure itself must (it did not: the chip stayed "possibly stale" until the next prompt).
    await waitFor(() => /^cgc updating… ([3-9]|\d{2,})s/.test(s.chip() ?? ""), "the update to run for 3 s", 60_000);
    const [engine] = processesOf(home.home, /pi-cgc-engine\.py (--\S+ \S+ )*serve /);
    expect(engine).toBeDefined();
    process.kill(engine?.pid as number, "SIGKILL");
    await waitFor(() => s.chip() === "cgc ready · fresh", "fresh after the full rebuild", 180_000);
    const fromKill = s.ui.statusHistory.findLastIndex((text) => text?.startsWith("cgc updating…"));
    const afterKill = s.ui.statusHistory.slice(fromKill);
    expect(afterKill.findIndex((text) => text?.startsWith("cgc syncing…"))).toBeLessThan(
      afterKill.indexOf("cgc ready · fresh"),
    );
    expect(s.notices().filter((message) => /incremental engine/.test(message))).toEqual([
      expect.stringMatching(/engine is stopped after a failure: .*; each sync is a full rebuild/),
    ]);
    expect((await functionNames(repo, "pkg/generated.py")).length).toBe(4_001);
    expect(await functionNames(repo, "pkg/text.py")).toContain("engine_caller");
    // Two KùzuDB indexes of the slow file (the fixture's, the full rebuild's) and the engine's update between.
  }, 300_000);

  it("the graph deleted under the session (the user's cgc delete): the next edit is not written into an empty graph, and nothing is called fresh", async () => {
    const repo = await repos.indexed(home.env);
    const s = await readySession(repo);
    await engineUp(s);
    // The test's home holds the other tests' repositories too.
    const filesOfRepo = `MATCH (f:File) WHERE f.path STARTS WITH '${realpathSync(repo.path)}/' RETURN f.name AS name`;
    // cgc refuses to delete unless its config allows it (ALLOW_DB_DELETION, read from the environment too).
    const deleted = await cgcExec(["delete", "--yes", realpathSync(repo.path)], {
      cwd: repo.path,
      env: { ...home.env, ALLOW_DB_DELETION: "true" },
    });
    expect(`${deleted.stdout}${deleted.stderr}`).toMatch(/Successfully deleted repository/);
    s.h.faux.setResponses([
      fauxAssistantMessage(
        fauxToolCall("edit", {
          path: "pkg/text.py",
          edits: [
            {
              oldText: "def orphan(value):",
              newText: "def after_delete(value):\n    return value\n\n\ndef orphan(value):",
            },
          ],
        }),
        { stopReason: "toolUse" },
      ),
      fauxAssistantMessage("done"),
    ]);
    const from = s.ui.statusHistory.length;
    await s.h.session.prompt("edit after the delete");
    const settled = () =>
      s.ui.statusHistory.slice(from).find((text) => /^cgc (unindexed|ready · fresh)$/.test(text ?? ""));
    await waitFor(settled, "the update to settle", 60_000);
    // Written, the edited file alone would have been read back as reflected: a "fresh" graph of one file.
    expect(settled()).toBe("cgc unindexed");
    expect(await names(repo, filesOfRepo)).toEqual([]);
    expect(s.notices()).toContainEqual(expect.stringMatching(/^No code graph for .* yet\. Run \/cgc index/));
    expect(await s.status()).toMatch(/the graph holds no index of .* \(deleted, or lost by its server\)/);
    // The user's /cgc sync does not index unasked either: /cgc index does.
    const before = s.ui.notices.length;
    await s.h.session.prompt("/cgc sync");
    expect(s.ui.notices.slice(before).map((notice) => notice.message)).toContainEqual(
      expect.stringMatching(/^Nothing to sync: cgc is unindexed/),
    );
    expect(await names(repo, filesOfRepo)).toEqual([]);
  }, 180_000);

  it("the read-back calls a changed file unreflected once the disk moved on after the update: deleted, or written again", async () => {
    const repo = await repos.indexed(home.env);
    const root = realpathSync(repo.path); // the engine names files by their resolved paths
    const runner = createRunner({
      executable: cgcBinary(),
      env: { ...process.env, ...home.env },
      budgets: { probe: 60_000, query: 60_000, maintenance: 120_000, longLived: 0 },
    });
    const engine = startEngine({
      runner,
      python: venvPython(),
      root,
      cacheDir: join(home.home, "engine-cache"),
      startBudgetMs: 120_000,
    });
    try {
      expect((await engine.started).phase).toBe("ready");
      const added = join(root, "pkg", "added.py");
      const text = join(root, "pkg", "text.py");
      writeFileSync(added, "def added():\n    return 1\n");
      appendFileSync(text, "\n\ndef later():\n    return 2\n");
      const updated = await engine.update([added, text], 120_000);
      expect(updated.ok, JSON.stringify(updated)).toBe(true);
      expect(await engine.verify([added, text], 60_000)).toEqual({
        ok: true,
        value: expect.objectContaining({ reflected: [added, text], unreflected: [] }),
      });
      // The read-back asks the disk about the paths it reads back (no second walk of the tree).
      rmSync(added);
      appendFileSync(text, "\n\ndef even_later():\n    return 3\n");
      expect(await engine.verify([added, text], 60_000)).toEqual({
        ok: true,
        value: expect.objectContaining({ reflected: [], unreflected: [added, text] }),
      });
    } finally {
      await engine.stop();
    }
  }, 300_000);

  it("on FalkorDB, a file whose write fails at a NUL in a docstring is updated and read back as cgc's own index leaves it", async () => {
    // cgc's parser unescapes `\0` into a NUL, FalkorDB reads the query's text up to it: cgc's write of the file
    // fails at its classes and cgc goes on (docs/cgc-compat.md). The engine's update writes what cgc's index
    // leaves, and its read-back calls the file reflected: a session is not held possibly stale by it.
    const backend = await startBackend("falkordb-remote");
    const repo = await repos.indexed(backend.env);
    const root = realpathSync(repo.path);
    const engine = startEngine({
      runner: createRunner({
        executable: cgcBinary(),
        env: { ...process.env, ...backend.env },
        budgets: { probe: 60_000, query: 60_000, maintenance: 120_000, longLived: 0 },
      }),
      python: venvPython(),
      root,
      cacheDir: join(backend.home.home, "engine-cache"),
      startBudgetMs: 120_000,
    });
    try {
      expect((await engine.started).phase).toBe("ready");
      const holder = join(root, "pkg", "holder.py");
      writeFileSync(holder, NUL_DOCSTRINGS["in_class.py"] as string);
      const updated = await engine.update([holder], 120_000);
      expect(updated.ok, JSON.stringify(updated)).toBe(true);
      expect(await engine.verify([holder], 60_000)).toEqual({
        ok: true,
        value: expect.objectContaining({ reflected: [holder], unreflected: [] }),
      });
      const query = (cypher: string) =>
        cgcExec(["query", cypher], { cwd: root, env: backend.env }).then((result) =>
          [...result.stdout.matchAll(/"name": "([^"]+)"/g)].map((match) => match[1] as string).sort(),
        );
      // The functions' batch comes before the classes': the functions are there, the class is not.
      expect(await query(`MATCH (f:File {path: '${holder}'})-[:CONTAINS]->(n) RETURN n.name AS name`)).toEqual([
        "<module>",
        "get",
        "helper",
      ]);
    } finally {
      await engine.stop();
      await backend.stop();
    }
  }, 300_000);

  it("a deleted file held the only import of a module: its Module node goes with it, one another file imports stays", async () => {
    const repo = await repos.indexed(home.env);
    const { root, launch } = engines(repo, "engine-module-purge");
    const modules = () => names(repo, "MATCH (m:Module) RETURN m.name AS name");
    const lonely = join(root, "pkg", "lonely.py");
    const other = join(root, "pkg", "other_importer.py");
    const first = launch();
    try {
      expect((await first.started).phase).toBe("ready");
      expect((await first.rebuilt([], 120_000)).ok).toBe(true);
      writeFileSync(
        lonely,
        "import only_lonely_imports_this\nimport imported_by_two\n\n\ndef lonely():\n    return 1\n",
      );
      writeFileSync(other, "import imported_by_two\n");
      expect((await first.update([lonely, other], 120_000)).ok).toBe(true);
    } finally {
      await first.stop(); // KùzuDB's lock, for the queries
    }
    expect(await modules()).toEqual(expect.arrayContaining(["only_lonely_imports_this", "imported_by_two"]));
    // The engine purges only the modules a deleted file pointed to (cgc's own purge scans every Module).
    const second = launch();
    try {
      expect((await second.started).phase).toBe("ready");
      rmSync(lonely);
      expect((await second.update([lonely], 120_000)).ok).toBe(true);
    } finally {
      await second.stop();
    }
    const left = await modules();
    expect(left).not.toContain("only_lonely_imports_this");
    expect(left).toContain("imported_by_two");
    const { missing, extra } = await compareWithFullIndexInNewHome(repo.path, home.env);
    expect({ missing, extra }).toEqual({ missing: [], extra: [] });
  }, 300_000);

  it("saves its warm-start cache aside when idle: an update meanwhile is answered, and only a save of what it then holds is kept", async () => {
    const repo = await repos.indexed(home.env);
    const { root, cacheDir, launch } = engines(repo, "engine-cache-aside");
    // A save of a large state takes seconds (10 s at 5 000 files): here each save waits for this file, and takes it.
    const gate = join(home.home, "engine-save-gate");
    const savesWaiting = () => readdirSync(cacheDir).filter((name) => name.endsWith(".saving"));
    const untrusted = () => readdirSync(cacheDir).some((name) => name.endsWith(".untrusted"));
    const text = join(root, "pkg", "text.py");
    const first = launch(["--save-gate", gate]);
    try {
      expect((await first.started).phase).toBe("ready");
      expect((await first.rebuilt([], 120_000)).ok).toBe(true); // the tree is the graph's: a trusted cache
      appendFileSync(text, "\n\ndef saved_first():\n    return 1\n");
      expect((await first.update([text], 120_000)).ok).toBe(true);
      // Idle: the save starts aside and waits at the gate; the update's commit left the cache untrusted.
      const [firstSave] = await waitFor(() => savesWaiting().length > 0 && savesWaiting(), "a save aside");
      expect(untrusted()).toBe(true);
      appendFileSync(text, "\n\ndef saved_second():\n    return 2\n");
      const second = await first.update([text], 120_000); // answered while the save waits
      expect(second.ok && second.value.written, JSON.stringify(second)).toEqual([text]);
      expect((await first.verify([text], 60_000)).ok).toBe(true);
      // A save overtaken by a request is ended, not installed; the next idle time saves again, and that save waits.
      await waitFor(
        () => savesWaiting().length === 1 && savesWaiting()[0] !== firstSave,
        "the first save ended and a second waiting",
      );
      expect(untrusted()).toBe(true);
      writeFileSync(gate, "");
      await waitFor(() => savesWaiting().length === 0 && !untrusted(), "the second save installed");
    } finally {
      await first.stop();
    }
    // The next engine starts from that cache, trusted, and holds the second edit already.
    const next = launch();
    try {
      const started = await next.started;
      expect(started.phase === "ready" && started.facts.trusted, JSON.stringify(started)).toBe(true);
      const again = await next.update([text], 120_000);
      expect(again.ok && again.value.written, JSON.stringify(again)).toEqual([]);
    } finally {
      await next.stop();
    }
  }, 300_000);

  /** Engines of the indexed `repo` on one cache, with cgc's parse of pkg/parse_gated.py behind a gate. */
  function gatedEngines(repo: TinyRepo, name: string) {
    const { root, launch } = engines(repo, `${name}-cache`);
    const gate = join(home.home, `${name}-parse-gate`);
    return { gated: join(root, "pkg", "parse_gated.py"), gate, launch, gatedFaults: ["--parse-gate", gate] };
  }

  it("a stop that reaches the engine while cgc parses a file ends it, and the next engine writes that file whole", async () => {
    const repo = await repos.indexed(home.env);
    const { gated, gate, launch, gatedFaults } = gatedEngines(repo, "stop-in-parse");
    const first = launch(gatedFaults);
    try {
      expect((await first.started).phase).toBe("ready");
      expect((await first.rebuilt([], 120_000)).ok).toBe(true);
      writeFileSync(gated, "def gated_function(value):\n    return value\n");
      // pi-cgc stops its engine while cgc parses the file (the session ends, another writer appears): cgc's
      // parse catches every Exception, and once took the stop for the file's parse error.
      const updating = first.update([gated], 120_000);
      await waitFor(() => existsSync(`${gate}.waiting`), "cgc parsing the file");
      await first.stop();
      const answered = await updating;
      expect(answered.ok, JSON.stringify(answered)).toBe(false);
    } finally {
      await first.stop();
    }
    const next = launch();
    try {
      expect((await next.started).phase).toBe("ready");
      expect((await next.update([gated], 120_000)).ok).toBe(true);
      const checked = await next.verify([gated], 60_000);
      expect(checked).toMatchObject({ ok: true, value: { reflected: [gated], unreflected: [] } });
      expect(await functionNames(repo, "pkg/parse_gated.py")).toEqual(["<module>", "gated_function"]);
      const { missing, extra } = await compareWithFullIndexInNewHome(repo.path, home.env);
      expect({ missing, extra }).toEqual({ missing: [], extra: [] });
    } finally {
      await next.stop();
    }
  }, 300_000);

  it("a file cgc failed to parse once (read mid-write, say) is not read back as reflected; the next update writes it whole", async () => {
    const repo = await repos.indexed(home.env);
    const { gated, gate, launch, gatedFaults } = gatedEngines(repo, "failed-parse");
    writeFileSync(gate, ""); // parses go through at once; the one below fails
    const engine = launch(gatedFaults);
    try {
      expect((await engine.started).phase).toBe("ready");
      expect((await engine.rebuilt([], 120_000)).ok).toBe(true);
      writeFileSync(gated, "def gated_function(value):\n    return value\n");
      writeFileSync(`${gate}.fail`, "");
      expect((await engine.update([gated], 120_000)).ok).toBe(true);
      expect(existsSync(`${gate}.fail`)).toBe(false); // the failed parse happened
      // What the graph has is the failed parse (a file node without its function), which a parse now does not give.
      expect(await engine.verify([gated], 60_000)).toMatchObject({
        ok: true,
        value: { reflected: [], unreflected: [gated] },
      });
      expect((await engine.update([gated], 120_000)).ok).toBe(true);
      expect(await engine.verify([gated], 60_000)).toMatchObject({
        ok: true,
        value: { reflected: [gated], unreflected: [] },
      });
      expect(await functionNames(repo, "pkg/parse_gated.py")).toEqual(["<module>", "gated_function"]);
      const { missing, extra } = await compareWithFullIndexInNewHome(repo.path, home.env);
      expect({ missing, extra }).toEqual({ missing: [], extra: [] });
    } finally {
      await engine.stop();
    }
  }, 300_000);
});
