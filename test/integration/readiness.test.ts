// Readiness at session start, with the real pi (SDK, faux model, recording UI) and the real cgc in an
// isolated home: each case reaches the right state, chip text and exactly one notice.
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { type CgcHome, cgcBinary, cgcExec, cgcStart, makeCgcHome } from "../helpers/cgc-env.ts";
import { restoreEnv, restoreSuiteEnv, withEnv as setEnv, suiteEnv } from "../helpers/env.ts";
import { cgcStatus, type PiHarness, type RecordingUi, recordingUi, startPi, waitFor } from "../helpers/pi-sdk.ts";
import { commitAll, indexedTinyRepo, tinyRepo } from "../helpers/repos.ts";

let home: CgcHome;
const harnesses: PiHarness[] = [];

beforeAll(() => {
  home = makeCgcHome();
  suiteEnv({ HOME: home.home });
});
afterEach(async () => {
  for (const h of harnesses.splice(0)) await h.dispose();
  restoreEnv();
});
afterAll(() => {
  restoreSuiteEnv();
  home.cleanup();
});

/** The case's environment: the real cgc unless it names another executable. */
function withEnv(values: Record<string, string>) {
  setEnv({ CGC_EXECUTABLE: cgcBinary(), ...values });
}

async function start(cwd: string, ui: RecordingUi = recordingUi()) {
  const h = await startPi({ cwd, ui });
  harnesses.push(h);
  return { h, ui, chip: () => ui.statuses.get("cgc") };
}

async function repositoryPaths(cwd: string): Promise<string[]> {
  const result = await cgcExec(["query", "MATCH (r:Repository) RETURN r.path AS path"], { cwd, env: home.env });
  return [...result.stdout.matchAll(/"path": "([^"]+)"/g)].map((match) => match[1] as string);
}

const noticeTexts = (ui: RecordingUi) => ui.notices.map((notice) => notice.message);

describe("readiness at session start", () => {
  it("cgc missing: unavailable, one notice saying how to install it", async () => {
    withEnv({ CGC_EXECUTABLE: "/nonexistent/bin/cgc" });
    const { ui, chip } = await start(tinyRepo().path);
    await waitFor(() => chip() === "cgc unavailable", "chip unavailable");
    expect(noticeTexts(ui)).toEqual([expect.stringContaining("pipx install codegraphcontext")]);
  });

  it("unindexed, autoCreate false: one notice naming /cgc index and the key; nothing is indexed", async () => {
    withEnv({});
    const repo = tinyRepo();
    const { ui, chip } = await start(repo.path);
    await waitFor(() => chip() === "cgc unindexed", "chip unindexed");
    expect(noticeTexts(ui)).toEqual([expect.stringMatching(/\/cgc index.*lifecycle\.autoCreate/)]);
    expect(await repositoryPaths(repo.path)).not.toContain(repo.path);
  });

  it("/cgc index on an unindexed workspace: indexing…, checking…, ready · fresh — never unknown — and one notice says it", async () => {
    withEnv({});
    const repo = tinyRepo();
    const ui = recordingUi();
    ui.confirmAnswer = true;
    const { h, chip } = await start(repo.path, ui);
    await waitFor(() => chip() === "cgc unindexed", "chip unindexed");
    const before = ui.notices.length;
    await h.session.prompt("/cgc index");
    await waitFor(() => chip() === "cgc ready · fresh", `chip ready after the index (was ${chip()})`, 120_000);
    const after = ui.statusHistory.slice(ui.statusHistory.lastIndexOf("cgc unindexed") + 1);
    expect(after.some((text) => /^cgc indexing…/.test(text ?? ""))).toBe(true);
    expect(after).not.toContain("cgc unknown");
    expect(noticeTexts(ui).slice(before)).toEqual([expect.stringMatching(/^Indexed: .* — 6 files, \d+ functions/)]);
  });

  it("indexed: ready and fresh, one notice with the graph's counts", async () => {
    withEnv({});
    const repo = await indexedTinyRepo(home.env);
    const { h, ui, chip } = await start(repo.path);
    await waitFor(() => chip() === "cgc ready · fresh", "chip ready");
    expect(noticeTexts(ui)).toEqual([expect.stringMatching(/cgc ready: .* — 6 files, \d+ functions/)]);
    // One Python start: the graph query. The version comes from cgc's package metadata in its virtual
    // environment, not from a second `cgc --version` beside it.
    expect(await cgcStatus(h)).toMatch(/cgc: .*\(0\.6\.13\)[\s\S]*\(1 cgc spawns\)/);
    // The probe leaves the user's cgc config alone (cgc doctor would have written a default .env).
    expect(existsSync(join(home.home, ".codegraphcontext", ".env"))).toBe(false);
  });

  it("a session started in a subfolder of an indexed repository is ready", async () => {
    withEnv({});
    const repo = await indexedTinyRepo(home.env);
    const { h, chip } = await start(join(repo.path, "pkg"));
    await waitFor(() => chip() === "cgc ready · fresh", "chip ready from a subfolder");
    // The graph's repository is the workspace, not the subfolder pi started in.
    expect(await cgcStatus(h)).toContain(`workspace:  ${repo.path}\n`);
  });

  it("a repository under a path with spaces, brackets and unicode is ready (cgc prints it without [id])", async () => {
    withEnv({});
    const repo = await indexedTinyRepo(home.env, { awkwardPath: true });
    expect(repo.path).toContain("[id]");
    const { ui, chip } = await start(repo.path);
    await waitFor(() => chip() === "cgc ready · fresh", "chip ready");
    expect(noticeTexts(ui)).toEqual([expect.stringContaining(repo.path)]);
  });

  it("indexed but changed since (a file edited, HEAD moved): possibly stale, one notice naming why", async () => {
    withEnv({ CGC_LIFECYCLE_SYNC_ON_START: "false" });
    const repo = await indexedTinyRepo(home.env);
    const file = join(repo.path, "pkg", "alpha.py");
    writeFileSync(file, `${readFileSync(file, "utf8")}\n\ndef later():\n    return 2\n`);
    commitAll(repo.path, "later");
    const { ui, chip } = await start(repo.path);
    await waitFor(() => chip() === "cgc ready · possibly stale", "chip possibly stale");
    expect(noticeTexts(ui)).toEqual([
      expect.stringMatching(/possibly stale: HEAD moved .*1 file written after indexing/),
    ]);
  });

  it("changed since, syncOnStart on: the start-time sync runs and ends fresh", async () => {
    withEnv({});
    const repo = await indexedTinyRepo(home.env);
    const file = join(repo.path, "pkg", "beta.py");
    writeFileSync(file, `${readFileSync(file, "utf8")}\n\ndef synced_on_start():\n    return 3\n`);
    const { ui, chip } = await start(repo.path);
    await waitFor(
      // The engine's update (the default) or, without it, a full-rebuild sync.
      () => chip() === "cgc ready · fresh" && ui.statusHistory.some((s) => /^cgc (syncing|updating)…/.test(s ?? "")),
      "synced",
      120_000,
    );
    const query = await cgcExec(["query", "MATCH (f:Function {name: 'synced_on_start'}) RETURN f.path AS path"], {
      cwd: repo.path,
      env: home.env,
    });
    expect(query.stdout).toContain(file);
  });

  it("a real lock held by a second cgc process: busy, never corrupt", async () => {
    withEnv({});
    const repo = await indexedTinyRepo(home.env);
    const holder = cgcStart(["watch", repo.path], { cwd: repo.path, env: home.env });
    try {
      await holder.waitForLine("stdout", /Monitoring for file changes/);
      const { ui, chip } = await start(repo.path);
      await waitFor(() => chip() === "cgc busy", "chip busy", 60_000);
      expect(noticeTexts(ui)).toEqual([
        expect.stringContaining("another cgc process holds the embedded database lock"),
      ]);
      expect(ui.statusHistory).not.toContain("cgc corrupt");
    } finally {
      await holder.stop();
    }
  });

  it("a probe that times out: unknown, never corrupt", async () => {
    withEnv({ CGC_TIMEOUTS_PROBE_MS: "100" });
    const repo = await indexedTinyRepo(home.env);
    const { ui, chip } = await start(repo.path);
    await waitFor(() => chip() === "cgc unknown", "chip unknown");
    expect(noticeTexts(ui)).toEqual([expect.stringMatching(/state is unknown: .*took longer than 100 ms/)]);
    expect(ui.statusHistory).not.toContain("cgc corrupt");
  });
});

describe("consent for creation and destructive steps", () => {
  it("/cgc index declined: nothing runs, no Repository appears", async () => {
    withEnv({});
    const repo = tinyRepo();
    const { h, ui, chip } = await start(repo.path);
    await waitFor(() => chip() === "cgc unindexed", "chip unindexed");
    ui.confirmAnswer = false;
    await h.session.prompt("/cgc index");
    expect(ui.confirms).toEqual([{ title: "Build a code graph?", message: expect.stringContaining(repo.path) }]);
    expect(ui.confirms[0]?.message).toMatch(/kuzudb|falkordb|backend/);
    expect(ui.confirms[0]?.message).toContain(`cgc also writes a default ${join(repo.path, ".cgcignore")}`);
    expect(existsSync(join(repo.path, ".cgcignore"))).toBe(false);
    expect(chip()).toBe("cgc unindexed");
    expect(await repositoryPaths(repo.path)).not.toContain(repo.path);
  });

  it("/cgc index confirmed: indexing… then ready, readiness re-derived", async () => {
    withEnv({});
    const repo = tinyRepo();
    const { h, ui, chip } = await start(repo.path);
    await waitFor(() => chip() === "cgc unindexed", "chip unindexed");
    ui.confirmAnswer = true;
    await h.session.prompt("/cgc index");
    expect(ui.statusHistory).toContainEqual(expect.stringMatching(/^cgc indexing… \d+s/));
    expect(chip()).toBe("cgc ready · fresh");
    expect(await repositoryPaths(repo.path)).toContain(repo.path);
  });

  it("autoCreate true: indexing starts in the background without asking", async () => {
    withEnv({ CGC_LIFECYCLE_AUTO_CREATE: "true" });
    const repo = tinyRepo();
    const { ui, chip } = await start(repo.path);
    await waitFor(() => chip() === "cgc ready · fresh", "ready after the automatic index", 120_000);
    expect(ui.confirms).toEqual([]);
    expect(ui.statusHistory).toContainEqual(expect.stringMatching(/^cgc indexing…/));
  });

  it("/cgc index --force and /cgc report ask first, naming the effect; declining runs and writes nothing", async () => {
    withEnv({});
    const repo = await indexedTinyRepo(home.env);
    const { h, ui, chip } = await start(repo.path);
    await waitFor(() => chip() === "cgc ready · fresh", "chip ready");
    const before = await cgcExec(["query", "MATCH (r:Repository) RETURN r.indexed_at AS at"], {
      cwd: repo.path,
      env: home.env,
    });
    ui.confirmAnswer = false;
    await h.session.prompt("/cgc index --force");
    await h.session.prompt("/cgc report");
    expect(ui.confirms.map((c) => c.message)).toEqual([
      expect.stringMatching(/deletes the existing graph of .* and rebuilds it/),
      expect.stringContaining(join(repo.path, "CGC_REPORT.md")),
    ]);
    expect(existsSync(join(repo.path, "CGC_REPORT.md"))).toBe(false);
    const after = await cgcExec(["query", "MATCH (r:Repository) RETURN r.indexed_at AS at"], {
      cwd: repo.path,
      env: home.env,
    });
    expect(after.stdout).toBe(before.stdout);
    expect(ui.statusHistory.some((s) => s?.startsWith("cgc rebuilding"))).toBe(false);
  });

  it("without a UI every confirmation is a no", async () => {
    withEnv({});
    const repo = tinyRepo();
    const h = await startPi({ cwd: repo.path });
    harnesses.push(h);
    await h.session.prompt("/cgc index");
    expect(await repositoryPaths(repo.path)).not.toContain(repo.path);
  });
});
