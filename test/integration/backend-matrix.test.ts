// The behaviour that depends on the backend, on each backend of the matrix (test/helpers/backends.ts), with
// the real pi (SDK, faux model, recording UI) and the real cgc: readiness at session start (an indexed tiny
// repository reaches `cgc ready · fresh`, an unindexed one `cgc unindexed`); an agent's edit reaching the
// graph (the engine where it was proven, the full rebuild where it was not, never fresh where cgc's own
// index is faulty); the watcher's `auto` gating; and nothing pi-cgc started left once pi has ended. Server
// backends are started here on 127.0.0.1 and stopped here.
import { appendFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fauxAssistantMessage, fauxToolCall } from "@mariozechner/pi-ai";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import {
  BACKEND_NAMES,
  type BackendName,
  falkordbLiteDaemons,
  startBackend,
  stopFalkordbLiteDaemons,
  type TestBackend,
  useBackendInProcess,
} from "../helpers/backends.ts";
import { cgcExec } from "../helpers/cgc-env.ts";
import { removeAgentDirs, restoreEnv, scratchAgentEnv, withEnv } from "../helpers/env.ts";
import { compareWithFullIndex } from "../helpers/graph-parity.ts";
import { NUL_DOCSTRINGS } from "../helpers/index-parity.ts";
import { type PiRpc, startPiRpc } from "../helpers/pi-rpc.ts";
import { cgcStatus, type PiHarness, recordingUi, startPi, toolResults, waitFor } from "../helpers/pi-sdk.ts";
import { indexedTinyRepo, POSSIBLE_CALLS_FILES, tinyRepo } from "../helpers/repos.ts";
import { chipOf, EXTENSION, PI_CLI, processesOf } from "../reliability/support.ts";

// Two cores shared by every suite: a probe's cgc call on a server backend or FalkorDB Lite (a daemon
// started per call) can take several seconds here, so the probe gets a wide budget; the verdict is under test.
const PROBE_BUDGET = { CGC_TIMEOUTS_PROBE_MS: "90000" };
/** A case that indexes, edits and syncs: minutes on FalkorDB Lite or Neo4j when the machine is loaded. */
const CASE_BUDGET = 300_000;

/**
 * How an agent's edit reaches the graph on each backend: through the engine wherever its parity was proven
 * (engine/pi_cgc_engine/database.py PROVEN_BACKENDS; test/integration/engine-parity.test.ts). On FalkorDB Lite cgc's
 * index into a database it has used before leaves functions no file contains (cgc 0.6.13 with falkordblite 0.9.0,
 * docs/cgc-compat.md), and the cases start from such a graph: only a full rebuild makes it whole, and pi-cgc's
 * own (cgc's index through the engine script) does. (test/integration/falkordb-lite.test.ts has the rest.)
 */
const EDIT_REACHES_GRAPH: Record<BackendName, "engine" | "a full rebuild"> = {
  kuzudb: "engine",
  "falkordb-remote": "engine",
  neo4j: "engine",
  falkordb: "a full rebuild",
};

const addCaller = fauxToolCall("edit", {
  path: "pkg/text.py",
  edits: [
    {
      oldText: "def orphan(value):",
      newText: "def matrix_caller(value):\n    return normalize(value)\n\n\ndef orphan(value):",
    },
  ],
});

describe.each(BACKEND_NAMES)("readiness on %s", (name) => {
  let backend: TestBackend;
  let restore: () => void = () => {};
  const harnesses: PiHarness[] = [];
  const rpcs: PiRpc[] = [];

  beforeAll(async () => {
    backend = await startBackend(name);
    restore = useBackendInProcess({ ...backend, env: { ...backend.env, ...PROBE_BUDGET } });
  }, 300_000);
  afterEach(async () => {
    for (const h of harnesses.splice(0)) await h.dispose();
    restoreEnv();
    await Promise.all(rpcs.splice(0).map((p) => p.stop()));
    removeAgentDirs();
    // pi ended: every cgc child and the engine with it, and whatever they started (FalkorDB Lite's daemon).
    await waitFor(
      () => processesOf(backend.home.home, /cgc|pi_cgc_engine/).length === 0,
      `no cgc or engine process of pi-cgc's left on ${name}`,
      20_000,
    );
    if (name === "falkordb") expect(falkordbLiteDaemons(backend.home.home)).toEqual([]);
  });
  afterAll(async () => {
    restore();
    await backend?.stop();
  }, 120_000);

  /**
   * The chip once pi has probed the graph a case indexes: on FalkorDB Lite, cgc's index into a database it has used
   * before links nothing to its file (docs/cgc-compat.md), so pi-cgc says possibly stale from the start.
   */
  const READY = name === "falkordb" ? "cgc ready · possibly stale" : "cgc ready · fresh";

  /** The tiny repository indexed for a case; on FalkorDB Lite into a database used before, whatever ran first. */
  async function indexedForCase() {
    if (name === "falkordb") {
      const used = await cgcExec(["query", "MATCH (n) RETURN count(n) AS c"], {
        cwd: backend.home.home,
        env: backend.env,
        cgc: backend.cgc,
      });
      expect(used.code, used.stderr).toBe(0);
    }
    return indexedTinyRepo(backend.env, { cgc: backend.cgc, timeoutMs: 240_000 });
  }

  async function start(cwd: string) {
    const ui = recordingUi();
    const h = await startPi({ cwd, ui });
    harnesses.push(h);
    return { h, ui, chip: () => ui.statuses.get("cgc") };
  }

  it("an indexed repository: cgc ready · fresh", async () => {
    const repo = await indexedTinyRepo(backend.env, { cgc: backend.cgc, timeoutMs: 240_000 });
    const { h, ui, chip } = await start(repo.path);
    await waitFor(() => chip() === "cgc ready · fresh", `chip ready on ${name} (was ${chip()})`, 150_000);
    // The backend named is the one cgc reported on the probe's own call.
    expect(ui.notices.map((notice) => notice.message)).toEqual([
      expect.stringMatching(new RegExp(`^cgc ready: .* — 6 files, \\d+ functions \\(${backend.reported.name}\\)\\.$`)),
    ]);
    const before = ui.notices.length;
    await h.session.prompt("/cgc status");
    const status = ui.notices
      .slice(before)
      .map((notice) => notice.message)
      .join("\n");
    expect(status).toContain(
      `backend:    ${backend.reported.name} — from cgc's own report (${backend.reported.source}`,
    );
  });

  it("an unindexed repository: cgc unindexed", async () => {
    const { chip } = await start(tinyRepo().path);
    await waitFor(() => chip() === "cgc unindexed", `chip unindexed on ${name} (was ${chip()})`, 150_000);
  });

  it(
    `an agent's edit, then a graph tool in the same run: ${EDIT_REACHES_GRAPH[name]}`,
    async () => {
      const repo = await indexedForCase();
      const { h, ui, chip } = await start(repo.path);
      await waitFor(() => chip() === READY, `chip ready on ${name} (was ${chip()})`, 150_000);
      h.faux.setResponses([
        fauxAssistantMessage(addCaller, { stopReason: "toolUse" }),
        fauxAssistantMessage(fauxToolCall("cgc_relations", { relation: "callers", target: "normalize" }), {
          stopReason: "toolUse",
        }),
        fauxAssistantMessage("done"),
      ]);
      const from = h.session.messages.length;
      await h.session.prompt("add a caller of normalize, then list its callers");
      const answer = toolResults(h, from).find((result) => result.name === "cgc_relations");
      expect(answer?.isError, answer?.text).toBe(false);
      const notices = () => ui.notices.map((notice) => notice.message);
      await waitFor(() => chip() === "cgc ready · fresh", `fresh after the edit on ${name} (was ${chip()})`, 240_000);
      const query = await cgcExec(
        ["query", `MATCH (f:Function) WHERE f.path = '${join(repo.path, "pkg", "text.py")}' RETURN f.name AS name`],
        { cwd: repo.path, env: backend.env, cgc: backend.cgc },
      );
      expect(query.stdout).toContain("matrix_caller");
      if (EDIT_REACHES_GRAPH[name] === "a full rebuild") {
        // The graph it started from was never called fresh; the rebuild that mended it was pi-cgc's.
        expect(ui.statusHistory.indexOf("cgc ready · fresh")).toBeGreaterThan(
          ui.statusHistory.indexOf("cgc ready · possibly stale"),
        );
        expect(ui.statusHistory).toContainEqual(expect.stringMatching(/^cgc (syncing|rebuilding)…/));
        expect(await cgcStatus(h)).toMatch(/full index: pi-cgc's own, by its engine script/);
        return;
      }
      // The engine applied it before the tool answered, and no full rebuild ran.
      expect(answer?.text).toMatch(/matrix_caller/);
      expect(await cgcStatus(h)).toMatch(new RegExp(`engine: {5}ready — cgc 0\\.6\\.13, ${name}, \\d+ files`));
      expect(ui.statusHistory.filter((text) => /^cgc (syncing|rebuilding|indexing)…/.test(text ?? ""))).toEqual([]);
      expect(notices().filter((message) => /incremental engine/.test(message))).toEqual([]);
    },
    CASE_BUDGET,
  );

  it(
    "callers, transitive callers and call chains list possible callers apart, with the same answers as on KùzuDB",
    async () => {
      if (name === "falkordb") {
        const used = await cgcExec(["query", "MATCH (n) RETURN count(n) AS c"], {
          cwd: backend.home.home,
          env: backend.env,
          cgc: backend.cgc,
        });
        expect(used.code, used.stderr).toBe(0);
      }
      const repo = await indexedTinyRepo(backend.env, {
        cgc: backend.cgc,
        timeoutMs: 240_000,
        extraFiles: POSSIBLE_CALLS_FILES,
      });
      const { h, chip } = await start(repo.path);
      await waitFor(() => chip() === READY, `chip ready on ${name} (was ${chip()})`, 150_000);
      h.faux.setResponses([
        ...[
          { relation: "callers", target: "load" },
          { relation: "callers_transitive", target: "process", file: "pkg/a.py", depth: 2 },
          { relation: "call_chain", target: "top", to: "process" },
        ].map((args) => fauxAssistantMessage(fauxToolCall("cgc_relations", args), { stopReason: "toolUse" })),
        fauxAssistantMessage("done"),
      ]);
      const from = h.session.messages.length;
      await h.session.prompt("who calls load and process");
      const [load, transitive, chain] = toolResults(h, from);
      for (const result of [load, transitive, chain]) expect(result?.isError, result?.text).toBe(false);
      expect(load?.text).toMatch(
        /^No confirmed callers of load; 1 possible .*\n- fetch {2}pkg\/store\.py:6 {2}\(calls load; fetch defined at line 5\) {2}\[possible: [^\]]*self\.load\(\)[^\]]*\]$/,
      );
      const ambiguous = "several functions have this name; cgc picked one by name";
      expect(transitive?.text).toContain(
        [
          "1 function reaches process within 2 calls (path:line is the definition):",
          "- go  pkg/a.py:5  (1 hop)",
          "",
          "2 functions reach process only through a possible call (not confirmed; each names the call and why):",
          `- both  pkg/use.py:4  (1 hop)  [possible: through both → process: ${ambiguous}]`,
          `- top  pkg/use.py:8  (2 hops)  [possible: through both → process: ${ambiguous}]`,
        ].join("\n"),
      );
      expect(chain?.text).toContain(
        `1. top (pkg/use.py:8) → both (pkg/use.py:4) → process (pkg/a.py:2)  [through a possible call: both → process: ${ambiguous}]`,
      );
    },
    CASE_BUDGET,
  );

  it(
    "/cgc index --force, confirmed: the full rebuild ends ready · fresh; a file FalkorDB takes only in part is named",
    async () => {
      const repo = await indexedForCase();
      const { h, ui, chip } = await start(repo.path);
      await waitFor(() => chip() === READY, `chip ready on ${name} (was ${chip()})`, 150_000);
      appendFileSync(join(repo.path, "pkg", "alpha.py"), "\n\ndef rebuilt_in():\n    return 1\n");
      // A class docstring cgc's parser unescapes into a NUL: FalkorDB cannot take it (docs/cgc-compat.md).
      writeFileSync(join(repo.path, "pkg", "escapes.py"), NUL_DOCSTRINGS["in_class.py"] as string);
      ui.confirmAnswer = true;
      const from = ui.statusHistory.length;
      await h.session.prompt("/cgc index --force");
      expect(ui.statusHistory.slice(from)).toContainEqual(expect.stringMatching(/^cgc rebuilding… \d+s/));
      await waitFor(() => !/…$|… /.test(chip() ?? ""), `the rebuild settled on ${name} (was ${chip()})`, 150_000);
      expect(chip()).toBe("cgc ready · fresh");
      const query = await cgcExec(["query", "MATCH (f:Function {name: 'rebuilt_in'}) RETURN f.name AS name"], {
        cwd: repo.path,
        env: backend.env,
        cgc: backend.cgc,
      });
      expect(query.stdout).toContain("rebuilt_in");
      const partial = ui.notices.filter((notice) => /only in part/.test(notice.message));
      if (name === "falkordb" || name === "falkordb-remote")
        expect(partial.map((notice) => [notice.message, notice.level])).toEqual([
          [
            `cgc index: 1 file only in part (${name} cannot take a NUL character in a docstring): pkg/escapes.py. ` +
              "cgc's own index leaves them the same way: what comes before that docstring, without their links.",
            "warning",
          ],
        ]);
      else expect(partial).toEqual([]);
    },
    CASE_BUDGET,
  );

  // On FalkorDB Lite this failed until pi-cgc's processes took turns at the daemon's start (src/cgc/lite-gate.ts):
  // the two probes' cgc processes each started a daemon; one was left unreachable and its cgc answered from an
  // empty KùzuDB, so that pi said `cgc unindexed` (docs/cgc-compat.md, "two pi processes on one graph").
  it(
    "two pi processes on one graph: an edit synced in one reaches the graph; the other follows; nothing corrupt; what they leave equals a full index",
    async () => {
      const repo = await indexedForCase();
      // One user's two pi processes share pi's agent directory (each knows the other's writes for pi-cgc's).
      const agentDir = scratchAgentEnv().PI_CODING_AGENT_DIR as string;
      const pi = () => {
        const started = startPiRpc({
          cli: PI_CLI,
          cwd: repo.path,
          args: ["--no-session", "--no-extensions", "-e", EXTENSION],
          env: {
            ...backend.env,
            ...PROBE_BUDGET,
            PI_CODING_AGENT_DIR: agentDir,
            PI_OFFLINE: "1",
            CGC_EXECUTABLE: backend.cgc,
          },
          onUiRequest: () => ({ confirmed: true }),
        });
        rpcs.push(started);
        return started;
      };
      const chips = (p: PiRpc) => p.frames.map(chipOf).filter((text): text is string => text !== undefined);
      /** `/cgc sync` in one pi, resolved with what it said of the outcome. */
      const sync = async (p: PiRpc): Promise<string> => {
        const from = p.frames.length;
        await p.request({ type: "prompt", message: "/cgc sync" }, 240_000); // answered once the sync ran
        const said = () =>
          p.frames
            .slice(from)
            .filter((f) => f.type === "extension_ui_request" && f.method === "notify")
            .map((f) => String(f.message))
            .find((text) =>
              /^(Synced|Sync ended|Updated|Update skipped|Nothing to update)|sync skipped|FalkorDB Lite/.test(text),
            );
        await waitFor(() => said() !== undefined, `the sync's outcome on ${name}`, 240_000);
        return said() as string;
      };
      const [a, b] = [pi(), pi()];
      // Both quit as a user quits pi in RPC mode (its input ends): each lets its own cgc children end cleanly.
      const quit = async (p: PiRpc) => {
        p.child.stdin?.end();
        await waitFor(() => p.child.exitCode !== null || p.child.signalCode !== null, `pi quit on ${name}`, 60_000);
      };
      await waitFor(
        () => chips(a).at(-1) === READY && chips(b).at(-1) === READY,
        `two ready pis on ${name}`,
        150_000,
      ).catch((error: Error) => {
        throw new Error(`${error.message} (first pi: ${chips(a).join(" → ")}; second: ${chips(b).join(" → ")})`);
      });
      // Both on the backend asked for: neither fell back to another database (FalkorDB Lite's falls back to KùzuDB).
      // The notice follows the chip.
      const readyNotice = (p: PiRpc) =>
        p.frames
          .filter((f) => f.type === "extension_ui_request" && f.method === "notify")
          .map((f) => String(f.message))
          .find((text) => text.startsWith("cgc ready: "));
      await waitFor(() => readyNotice(a) && readyNotice(b), `both ready notices on ${name}`, 20_000);
      for (const p of [a, b]) expect(readyNotice(p)).toMatch(new RegExp(`\\(${backend.reported.name}\\)\\.$`));
      appendFileSync(join(repo.path, "pkg", "beta.py"), "\n\ndef from_the_first_pi():\n    return 1\n");
      const first = await sync(a);
      const second = await sync(b);
      const onServer = name === "falkordb-remote" || name === "neo4j";
      expect(first).toMatch(/^(Updated|Synced) /);
      // The second finds the change in the graph already, or applies it again: either way fresh, never busy on a server.
      expect(second).toMatch(
        onServer ? /^(Updated|Synced|Nothing to update)/ : /^(Updated|Synced|Nothing to update)|skipped/,
      );
      // FalkorDB Lite: the graph cgc indexed links nothing to its file; the sync's full rebuild (pi-cgc's) mends it.
      expect(chips(a).at(-1)).toBe("cgc ready · fresh");
      const query = await cgcExec(["query", "MATCH (f:Function {name: 'from_the_first_pi'}) RETURN f.name AS name"], {
        cwd: repo.path,
        env: backend.env,
        cgc: backend.cgc,
      });
      expect(query.stdout).toContain("from_the_first_pi");
      expect([...chips(a), ...chips(b)]).not.toContain("cgc corrupt");
      if (onServer) expect([...chips(a), ...chips(b)]).not.toContain("cgc busy");
      await Promise.all([quit(a), quit(b)]);
      // What the two left is what a full index of the same tree holds.
      if (name === "falkordb") expect(falkordbLiteDaemons(backend.home.home)).toEqual([]); // pi's, before the dump's
      const full = await startBackend(name);
      try {
        const { missing, extra, keptIn } = await compareWithFullIndex(repo.path, backend, full);
        expect({ missing, extra }, `both dumps in ${keptIn}`).toEqual({ missing: [], extra: [] });
      } finally {
        await full.stop();
        if (name === "falkordb") await stopFalkordbLiteDaemons(backend.home.home); // the dump's own
      }
    },
    CASE_BUDGET,
  );

  it(
    `freshness.watch auto: ${["falkordb-remote", "neo4j"].includes(name) ? "a watcher" : "no watcher"} on ${name}`,
    async () => {
      withEnv({ CGC_FRESHNESS_WATCH: "auto" });
      const repo = await indexedTinyRepo(backend.env, { cgc: backend.cgc, timeoutMs: 240_000 });
      const { ui } = await start(repo.path);
      const notices = () => ui.notices.map((notice) => notice.message);
      if (name === "falkordb-remote" || name === "neo4j") {
        await waitFor(
          () => notices().some((text) => /^cgc watch is following/.test(text)),
          `a verified watcher on ${name}`,
          150_000,
        );
      } else {
        await waitFor(
          () =>
            notices().some((text) =>
              /^freshness\.watch is auto and cgc's backend is .* not a server backend/.test(text),
            ),
          `the declined watcher on ${name}`,
          150_000,
        );
        expect(processesOf(backend.home.home, /cgc watch/)).toEqual([]);
      }
    },
    CASE_BUDGET,
  );
});
