// FalkorDB Lite, the backend cgc 0.6.13 picks on Python 3.12 and later, has a fault of its own: every index
// after the database's first (an `index --force`, an index after a `cgc query` or `cgc list`, each sync)
// writes the functions and classes but links none of them to their file — the lookup by `occurrence_index`
// its writer matches on finds nothing: Lite's range index cannot look up the number 0 (docs/cgc-compat.md).
// pi-cgc must not call such a graph fresh; its own full index there (cgc's command run by the engine script) and its
// engine's updates, which write around that lookup, must leave a whole one. Real pi (faux model), real cgc on real
// FalkorDB Lite daemons of isolated HOMEs.
import { appendFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it, onTestFinished } from "vitest";
import { uncontainedQuery } from "../../src/cgc/graph-checks.ts";
import { falkordbLiteDaemons, startBackend, type TestBackend, useBackendInProcess } from "../helpers/backends.ts";
import { cgcExec, cgcStart, stopEscalating } from "../helpers/cgc-env.ts";
import { restoreEnv, withEnv } from "../helpers/env.ts";
import { compareWithFullIndex } from "../helpers/graph-parity.ts";
import { cgcStatus, type PiHarness, recordingUi, startPi, waitFor } from "../helpers/pi-sdk.ts";
import { caseRepos } from "../helpers/repos.ts";

let backend: TestBackend;
let restore: () => void = () => {};
const harnesses: PiHarness[] = [];
const repos = caseRepos();

beforeAll(async () => {
  backend = await startBackend("falkordb");
  restore = useBackendInProcess(backend);
}, 120_000);
afterEach(async () => {
  for (const h of harnesses.splice(0)) await h.dispose();
  repos.cleanup();
  restoreEnv();
});
afterAll(async () => {
  restore();
  await backend?.stop();
}, 120_000);

const unlinked = async (root: string, lite: TestBackend = backend): Promise<number> => {
  const query = await cgcExec(["query", uncontainedQuery(root)], { cwd: root, env: lite.env, cgc: lite.cgc });
  expect(query.code, query.stderr).toBe(0);
  return [...query.stdout.matchAll(/"functions": (\d+)/g)].reduce((sum, match) => sum + Number(match[1]), 0);
};

/**
 * A FalkorDB Lite of its own (a HOME no cgc has used, so the next index is the database's first, which is whole),
 * which pi in this process uses until the test ends.
 */
async function ownLite(): Promise<TestBackend> {
  const own = await startBackend("falkordb");
  const restoreShared = useBackendInProcess(own);
  onTestFinished(async () => {
    for (const h of harnesses.splice(0)) await h.dispose();
    restoreShared();
    await own.stop();
  });
  return own;
}

/** A tiny repository indexed on `lite`, and pi on it once its chip is `until`. */
async function session(lite: TestBackend, until: string) {
  const repo = await repos.indexed(lite.env, { cgc: lite.cgc, timeoutMs: 240_000 });
  const ui = recordingUi();
  const h = await startPi({ cwd: repo.path, ui });
  harnesses.push(h);
  const chip = () => ui.statuses.get("cgc");
  await waitFor(() => chip() === until, `${until} (was ${chip()})`, 150_000);
  return { repo, h, ui, chip };
}

/** A tiny repository cgc's own re-index left unlinked on `lite`, and pi started on it, possibly stale. */
async function piOnUnlinkedGraph(lite: TestBackend) {
  const repo = repos.tiny();
  const options = { cwd: repo.path, env: lite.env, cgc: lite.cgc, timeoutMs: 240_000 };
  expect((await cgcExec(["index", repo.path], options)).code).toBe(0);
  expect((await cgcExec(["index", "--force", repo.path], options)).code).toBe(0);
  expect(await unlinked(repo.path, lite)).toBeGreaterThan(0);
  const ui = recordingUi();
  const h = await startPi({ cwd: repo.path, ui });
  harnesses.push(h);
  await waitFor(() => ui.statuses.get("cgc") === "cgc ready · possibly stale", "possibly stale", 150_000);
  return { repo, h, ui };
}

/** The names of the functions the graph of `root` holds on `lite`. */
async function graphFunctionNames(root: string, lite: TestBackend): Promise<string[]> {
  const query = `MATCH (f:File)-[:CONTAINS]->(fn:Function) WHERE f.path STARTS WITH '${root}/' RETURN fn.name AS name`;
  const result = await cgcExec(["query", query], { cwd: root, env: lite.env, cgc: lite.cgc });
  expect(result.code, result.stderr).toBe(0);
  return (JSON.parse(result.stdout.slice(result.stdout.indexOf("["))) as Array<{ name: string }>).map(
    (row) => row.name,
  );
}

/** The graph of `root` on `lite` against a fresh Lite's full index of the same tree: no line differs. */
async function expectEqualToFullIndex(root: string, lite: TestBackend): Promise<void> {
  const copy = await startBackend("falkordb");
  try {
    const { missing, extra, keptIn } = await compareWithFullIndex(root, lite, copy);
    expect({ missing, extra }, `both dumps in ${keptIn}`).toEqual({ missing: [], extra: [] });
  } finally {
    await copy.stop();
  }
}

describe("FalkorDB Lite: a re-index that links nothing", () => {
  it("is real: the first index links every function to its file, an index --force after it links none", async () => {
    const repo = repos.tiny();
    const options = { cwd: repo.path, env: backend.env, cgc: backend.cgc, timeoutMs: 240_000 };
    expect((await cgcExec(["index", repo.path], options)).code).toBe(0);
    expect(await unlinked(repo.path)).toBe(0);
    expect((await cgcExec(["index", "--force", repo.path], options)).code).toBe(0);
    expect(await unlinked(repo.path)).toBeGreaterThan(0);
  }, 300_000);

  it("a graph cgc indexed after the database's first is not called fresh when pi starts on it, and says why", async () => {
    const { h, ui } = await piOnUnlinkedGraph(await ownLite());
    expect(ui.notices.map((notice) => notice.message)).toContainEqual(
      expect.stringMatching(
        /possibly stale: cgc left (1 function or class|\d+ functions and classes) that no file contains.*FalkorDB Lite/,
      ),
    );
    expect(await cgcStatus(h)).toMatch(/freshness: {2}possibly-stale/);
    expect(ui.statusHistory).not.toContain("cgc ready · fresh");
  }, 400_000);

  it("a sync (a full rebuild) that leaves such a graph is not called fresh, and says why", async () => {
    withEnv({ CGC_FRESHNESS_ENGINE: "false" }); // the full-rebuild sync: the engine's updates are the next case
    const lite = await ownLite();
    const repo = repos.tiny();
    const options = { cwd: repo.path, env: lite.env, cgc: lite.cgc, timeoutMs: 240_000 };
    expect((await cgcExec(["index", repo.path], options)).code).toBe(0); // the database's first: whole
    // The fault shows in a daemon that loaded the saved graph. One daemon loads it, for the whole case: with the
    // engine off each cgc call would otherwise start one more that loads it, and FalkorDB can hang for good doing
    // so (docs/cgc-compat.md, "A daemon stuck loading its graph").
    const owner = cgcStart(["mcp", "start"], { cwd: repo.path, env: lite.env, cgc: lite.cgc });
    try {
      await owner.waitForLine("stderr", /MCP Server is running/);
      const ui = recordingUi();
      const h = await startPi({ cwd: repo.path, ui });
      harnesses.push(h);
      const chip = () => ui.statuses.get("cgc");
      await waitFor(() => chip() === "cgc ready · fresh", "fresh at the start", 150_000);
      appendFileSync(join(repo.path, "pkg", "alpha.py"), "\n\ndef added_on_lite():\n    return 1\n");
      await h.session.prompt("/cgc sync");
      expect(ui.notices.at(-1)?.message).toMatch(
        /^Synced .*, but cgc left (1 function or class|\d+ functions and classes) that no file contains, which a full index does not .*FalkorDB Lite/,
      );
      expect(chip()).toBe("cgc ready · possibly stale");
      const status = await cgcStatus(h);
      expect(status).toMatch(/freshness: {2}possibly-stale/);
      expect(status).not.toContain("full index:"); // with the engine off, cgc's own command
    } finally {
      for (const h of harnesses.splice(0)) await h.dispose();
      await stopEscalating(owner);
    }
  }, 400_000);

  it("pi-cgc's own full rebuild mends such a graph: fresh, whole, and equal to a full index of the same tree", async () => {
    const lite = await ownLite();
    const { repo, h, ui } = await piOnUnlinkedGraph(lite);
    await h.session.prompt("/cgc sync");
    expect(ui.statuses.get("cgc")).toBe("cgc ready · fresh");
    expect(await unlinked(repo.path, lite)).toBe(0);
    expect(await cgcStatus(h)).toMatch(/full index: pi-cgc's own, by its engine script/);
    await expectEqualToFullIndex(repo.path, lite);
  }, 400_000);

  it("a workspace whose top folder shadows the standard library (asyncio/) is still on FalkorDB Lite", async () => {
    // cgc starts Lite's worker as `python -m` in the workspace: with the workspace on its import path, a partial
    // asyncio package there failed the worker, and cgc went to an empty KùzuDB, saying so only in its banner.
    await ownLite();
    const repo = repos.tiny({ extraFiles: { "asyncio/__init__.py": "", "asyncio/events.py": "LOOP = None\n" } });
    const ui = recordingUi();
    const h = await startPi({ cwd: repo.path, ui });
    harnesses.push(h);
    await waitFor(() => ui.statuses.get("cgc") === "cgc unindexed", "unindexed", 150_000);
    expect(await cgcStatus(h)).toMatch(/backend: {4}falkordb — from cgc's own report/);
  }, 400_000);

  it("a daemon killed after the engine's update (what it wrote since its last save lost): fresh again only once the graph holds that update", async () => {
    const lite = await ownLite();
    const { repo, h, chip } = await session(lite, "cgc ready · fresh");
    appendFileSync(join(repo.path, "pkg", "alpha.py"), "\n\ndef lost_with_the_daemon(value):\n    return value\n");
    await h.session.prompt("/cgc sync");
    expect(chip()).toBe("cgc ready · fresh");
    // The fault: the daemon SIGKILLed (the kernel's OOM killer, a user's kill): redis keeps its writes in memory
    // and saves them only at its save points and at SHUTDOWN SAVE, so the engine's update goes with it; the
    // next cgc call finds its socket dead and starts a daemon from the older save on disk.
    const servers = falkordbLiteDaemons(lite.home.home).filter((daemon) => daemon.kind === "redis-server");
    expect(servers).toHaveLength(1);
    process.kill(servers[0]?.pid as number, "SIGKILL");
    appendFileSync(join(repo.path, "pkg", "beta.py"), "\n\ndef after_the_restart(value):\n    return value\n");
    await h.session.prompt("/cgc sync");
    await waitFor(() => !/^cgc (updating|rebuilding|syncing)/.test(chip() ?? ""), "settled", 240_000);
    expect(chip()).toBe("cgc ready · fresh");
    expect(await graphFunctionNames(repo.path, lite)).toEqual(
      expect.arrayContaining(["lost_with_the_daemon", "after_the_restart"]),
    );
    await expectEqualToFullIndex(repo.path, lite);
  }, 400_000);

  it("the engine's update is whole there: fresh, and equal to a full index of the same tree", async () => {
    const lite = await ownLite();
    const { repo, h, chip } = await session(lite, "cgc ready · fresh");
    appendFileSync(
      join(repo.path, "pkg", "alpha.py"),
      "\n\ndef added_by_engine(value):\n    return normalize(value)\n",
    );
    await h.session.prompt("/cgc sync");
    expect(chip()).toBe("cgc ready · fresh");
    expect(await unlinked(repo.path, lite)).toBe(0);
    await expectEqualToFullIndex(repo.path, lite);
  }, 400_000);
});
