// FalkorDB Lite, the backend cgc 0.6.13 picks on Python 3.12 and later, has a fault of its own: every index
// after the database's first (an `index --force`, an index after a `cgc query` or `cgc list`, each sync)
// writes the functions and classes but links none of them to their file — the lookup by `occurrence_index`
// its writer matches on finds nothing (docs/cgc-compat.md). pi-cgc cannot repair cgc's index; it must not call
// such a graph fresh. Real pi (faux model), real cgc on a real FalkorDB Lite daemon of an isolated HOME.
import { appendFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { uncontainedQuery } from "../../src/cgc/graph-checks.ts";
import { startBackend, type TestBackend, useBackendInProcess } from "../helpers/backends.ts";
import { cgcExec } from "../helpers/cgc-env.ts";
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
});
afterAll(async () => {
  restore();
  await backend?.stop();
}, 120_000);

const unlinked = async (root: string): Promise<number> => {
  const query = await cgcExec(["query", uncontainedQuery(root)], { cwd: root, env: backend.env, cgc: backend.cgc });
  expect(query.code, query.stderr).toBe(0);
  return [...query.stdout.matchAll(/"functions": (\d+)/g)].reduce((sum, match) => sum + Number(match[1]), 0);
};

/** A tiny repository indexed on this Lite database (its first index: whole), and pi ready and fresh on it. */
async function freshSession() {
  const repo = await repos.indexed(backend.env, { cgc: backend.cgc, timeoutMs: 240_000 });
  const ui = recordingUi();
  const h = await startPi({ cwd: repo.path, ui });
  harnesses.push(h);
  const chip = () => ui.statuses.get("cgc");
  await waitFor(() => chip() === "cgc ready · fresh", `ready and fresh (was ${chip()})`, 150_000);
  return { repo, h, ui, chip };
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

  it("a sync that leaves such a graph is not called fresh, and says why", async () => {
    process.env.CGC_FRESHNESS_ENGINE = "false"; // the full-rebuild sync: the engine's own check is the next case
    try {
      const { repo, h, ui, chip } = await freshSession();
      appendFileSync(join(repo.path, "pkg", "alpha.py"), "\n\ndef added_on_lite():\n    return 1\n");
      await h.session.prompt("/cgc sync");
      const said = ui.notices.at(-1)?.message ?? "";
      expect(said).toMatch(/no file contains, which a full index does not .*FalkorDB Lite/);
      expect(chip()).toBe("cgc ready · possibly stale");
      expect(await cgcStatus(h)).toMatch(/freshness: {2}possibly-stale/);
    } finally {
      delete process.env.CGC_FRESHNESS_ENGINE;
    }
  }, 400_000);

  it("the engine's update on it is not called fresh either", async () => {
    const { repo, h, chip } = await freshSession();
    appendFileSync(join(repo.path, "pkg", "alpha.py"), "\n\ndef added_by_engine():\n    return 1\n");
    await h.session.prompt("/cgc sync");
    expect(chip()).not.toBe("cgc ready · fresh");
    expect(await unlinked(repo.path)).toBeGreaterThan(0);
  }, 400_000);
});
