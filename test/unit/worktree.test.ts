// Worktree detection from git's own files (every gitfile form, written here by hand the way git writes
// them), context names, the ownership record, and the session scope where it needs no cgc. No processes:
// the integration suite runs real git and cgc.
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { notRun, type Runner } from "../../src/cgc/runner.ts";
import { createWorktreeScope } from "../../src/lifecycle/worktree-scope.ts";
import { createNoticeLedger } from "../../src/state/notices.ts";
import {
  contextNameFor,
  detectWorktree,
  orphanedContexts,
  ownershipOf,
  readRecord,
  readRecords,
  removeRecord,
  worktreeRecordDir,
  writeRecord,
} from "../../src/workspace/worktree.ts";

const top = realpathSync(mkdtempSync(join(tmpdir(), "pi-cgc-worktree-unit-")));
afterAll(() => rmSync(top, { recursive: true, force: true }));

let counter = 0;
function dir(...parts: string[]): string {
  const path = join(top, ...parts);
  mkdirSync(path, { recursive: true });
  return path;
}

/** A main checkout: `<repo>/.git/` with HEAD, as `git init` leaves it. */
function mainCheckout(): { repo: string; common: string } {
  const repo = dir(`repo-${++counter}`);
  const common = dir(repo.slice(top.length + 1), ".git");
  writeFileSync(join(common, "HEAD"), "ref: refs/heads/main\n");
  return { repo, common };
}

/** A linked worktree as `git worktree add` writes it: the gitfile, and `<common>/worktrees/<id>/{HEAD,commondir,gitdir}`. */
function linkedWorktree(common: string, id: string, pointer: "absolute" | "relative"): string {
  const worktree = dir(`wt-${++counter}`);
  const admin = join(common, "worktrees", id);
  mkdirSync(admin, { recursive: true });
  writeFileSync(join(admin, "HEAD"), "ref: refs/heads/feature\n");
  writeFileSync(join(admin, "commondir"), "../..\n");
  writeFileSync(join(admin, "gitdir"), `${join(worktree, ".git")}\n`);
  const target = pointer === "absolute" ? admin : join("..", common.slice(top.length + 1), "worktrees", id);
  writeFileSync(join(worktree, ".git"), `gitdir: ${target}\n`);
  return worktree;
}

describe("detectWorktree", () => {
  it("a linked worktree with an absolute gitdir: its id and the repository's common dir", () => {
    const { common } = mainCheckout();
    const worktree = linkedWorktree(common, "feature", "absolute");
    expect(detectWorktree(worktree)).toEqual({
      kind: "linked",
      root: worktree,
      identity: { commonDir: common, worktreeId: "feature" },
    });
  });

  it("a linked worktree with a relative gitdir (git --relative-paths): the same identity", () => {
    const { common } = mainCheckout();
    const worktree = linkedWorktree(common, "feature", "relative");
    expect(readFileSync(join(worktree, ".git"), "utf8")).toMatch(/^gitdir: \.\.\//);
    expect(detectWorktree(worktree)).toEqual({
      kind: "linked",
      root: worktree,
      identity: { commonDir: common, worktreeId: "feature" },
    });
  });

  it("a subfolder of a linked worktree belongs to it", () => {
    const { common } = mainCheckout();
    const worktree = linkedWorktree(common, "sub", "absolute");
    const inside = dir(worktree.slice(top.length + 1), "pkg", "deep");
    expect(detectWorktree(inside)).toMatchObject({ kind: "linked", root: worktree });
  });

  it("the main checkout and its subfolders are not worktrees", () => {
    const { repo } = mainCheckout();
    expect(detectWorktree(repo)).toEqual({ kind: "main", root: repo });
    expect(detectWorktree(dir(repo.slice(top.length + 1), "src"))).toEqual({ kind: "main", root: repo });
  });

  it("a folder outside any repository is not git", () => {
    // /tmp's ancestors hold no .git on a test machine; the folder itself certainly does not.
    expect(detectWorktree(dir(`plain-${++counter}`))).toEqual({ kind: "not-git" });
  });

  it("a submodule (gitdir into .git/modules, no commondir) is its own repository, not a worktree", () => {
    const { common } = mainCheckout();
    const modules = join(common, "modules", "lib");
    mkdirSync(modules, { recursive: true });
    writeFileSync(join(modules, "HEAD"), "0123456789012345678901234567890123456789\n");
    const sub = dir(`sub-${++counter}`);
    writeFileSync(join(sub, ".git"), `gitdir: ${modules}\n`);
    expect(detectWorktree(sub)).toEqual({ kind: "main", root: sub });
  });

  it("malformed pointers degrade to `malformed` with the reason, never throw", () => {
    const noLine = dir(`bad-${++counter}`);
    writeFileSync(join(noLine, ".git"), "this is not a gitfile\n");
    expect(detectWorktree(noLine)).toMatchObject({
      kind: "malformed",
      root: noLine,
      error: /without a "gitdir:" line/,
    });

    const dangling = dir(`bad-${++counter}`);
    writeFileSync(join(dangling, ".git"), `gitdir: ${join(top, "nowhere", "worktrees", "x")}\n`);
    expect(detectWorktree(dangling)).toMatchObject({ kind: "malformed", error: /is not a git directory/ });

    const { common } = mainCheckout();
    const worktree = linkedWorktree(common, "nocommon", "absolute");
    writeFileSync(join(common, "worktrees", "nocommon", "commondir"), "");
    expect(detectWorktree(worktree)).toMatchObject({ kind: "malformed", error: /has no commondir file/ });

    const empty = dir(`bad-${++counter}`);
    writeFileSync(join(empty, ".git"), "");
    expect(detectWorktree(empty)).toMatchObject({ kind: "malformed" });
  });
});

describe("contextNameFor", () => {
  const identity = (worktreeId: string, commonDir = "/repos/a/.git") => ({ commonDir, worktreeId });

  it("is stable and readable: wt-<slug>-<hash>", () => {
    expect(contextNameFor(identity("feature"))).toBe(contextNameFor(identity("feature")));
    expect(contextNameFor(identity("feature"))).toMatch(/^wt-feature-[0-9a-f]{8}$/);
  });

  it("differs for the same id in two repositories, and for ids that slug alike", () => {
    const names = new Set([
      contextNameFor(identity("feature", "/repos/a/.git")),
      contextNameFor(identity("feature", "/repos/b/.git")),
      contextNameFor(identity("Feature")),
      contextNameFor(identity("feature ")),
      contextNameFor(identity("fé")),
      contextNameFor(identity("f-")),
    ]);
    expect(names.size).toBe(6);
  });

  it("fits cgc_contexts' name rule and a directory name anywhere, whatever git allowed in the id", () => {
    const ids = [
      "wt-Fé-1]",
      "_x_",
      "a..b",
      "x".repeat(300),
      "..",
      "-lead",
      "Ünïcødé only",
      "a/b",
      "ωωω",
      "UPPER.case_ok-1",
    ];
    for (const id of ids) {
      const name = contextNameFor(identity(id));
      expect(name).toMatch(/^wt-[a-z0-9._-]+-[0-9a-f]{8}$/);
      expect(name).toMatch(/^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/);
      expect(name).not.toMatch(/[-.]{2}/);
    }
  });
});

describe("the worktree record", () => {
  const here = { commonDir: "/repos/a/.git", worktreeId: "feature" };
  const record = (commonDir: string, worktreeId: string) => ({
    commonDir,
    worktreeId,
    path: `/work/${worktreeId}`,
    createdAt: "2026-01-01T00:00:00.000Z",
  });

  it("one file per context, in the agent dir; written whole, with no temporary file left", () => {
    const records = worktreeRecordDir(dir(`agent-${++counter}`));
    expect(readRecord(records, "wt-feature-1")).toEqual({ ok: true });
    expect(readRecords(records)).toEqual(new Map());
    expect(writeRecord(records, "wt-feature-1", record(here.commonDir, here.worktreeId), true)).toEqual({ ok: true });
    expect(readRecord(records, "wt-feature-1")).toEqual({ ok: true, record: record(here.commonDir, here.worktreeId) });
    const updated = { ...record(here.commonDir, here.worktreeId), path: "/moved" };
    expect(writeRecord(records, "wt-feature-1", updated)).toEqual({ ok: true });
    expect(readRecords(records)).toEqual(new Map([["wt-feature-1", updated]]));
    expect(readdirSync(records)).toEqual(["wt-feature-1.json"]);
    removeRecord(records, "wt-feature-1");
    expect(readdirSync(records)).toEqual([]);
  });

  it("a claim succeeds once: again for the same worktree, never for another one", () => {
    const records = worktreeRecordDir(dir(`agent-${++counter}`));
    expect(writeRecord(records, "n", record(here.commonDir, "feature"), true).ok).toBe(true);
    expect(writeRecord(records, "n", { ...record(here.commonDir, "feature"), path: "/elsewhere" }, true).ok).toBe(true);
    const taken = writeRecord(records, "n", record("/repos/b/.git", "feature"), true);
    expect(taken).toMatchObject({ ok: false, taken: record(here.commonDir, "feature") });
    expect(readRecord(records, "n")).toEqual({ ok: true, record: record(here.commonDir, "feature") });
    expect(readdirSync(records)).toEqual(["n.json"]);
  });

  it("an unreadable record is reported, never read as empty", () => {
    const records = worktreeRecordDir(dir(`agent-${++counter}`));
    mkdirSync(records, { recursive: true });
    writeFileSync(join(records, "bad.json"), "{ not json");
    writeFileSync(join(records, "part.json"), JSON.stringify({ commonDir: "/r" }));
    expect(readRecord(records, "bad")).toMatchObject({ ok: false, error: /not valid JSON/ });
    expect(readRecord(records, "part")).toMatchObject({ ok: false, error: /not a complete pi-cgc record/ });
    expect(writeRecord(records, "bad", record("/r/.git", "x"), true)).toMatchObject({ ok: false });
    expect(readFileSync(join(records, "bad.json"), "utf8")).toBe("{ not json");
  });

  it("ownership: recorded for this worktree, unrecorded, or another worktree's (a mismatch)", () => {
    const theirs = record("/repos/b/.git", "feature");
    expect(ownershipOf(record(here.commonDir, "feature"), here).kind).toBe("recorded");
    expect(ownershipOf(undefined, here).kind).toBe("unrecorded");
    expect(ownershipOf(theirs, here)).toEqual({ kind: "mismatch", record: theirs });
  });

  it("orphans: records whose worktree git no longer has under <common>/worktrees/", () => {
    const { common } = mainCheckout();
    linkedWorktree(common, "alive", "absolute");
    const recorded = new Map([
      ["alive", record(common, "alive")],
      ["pruned", record(common, "pruned")],
      ["gone", record("/nowhere/.git", "x")],
    ]);
    expect(orphanedContexts(recorded).map(([name]) => name)).toEqual(["pruned", "gone"]);
  });
});

describe("the session's worktree scope, where no cgc is needed", () => {
  const noRunner = new Proxy({} as Runner, {
    get: () => {
      throw new Error("the scope spawned cgc");
    },
  });
  function scope(cwd: string, mode: "off" | "isolate") {
    const shown: string[] = [];
    const notices = createNoticeLedger({ hasUI: true, notify: (message) => shown.push(message), stderr: () => {} });
    const env = { PI_CODING_AGENT_DIR: dir(`agent-${++counter}`) };
    return { shown, scope: createWorktreeScope({ cwd, env, mode, notices }) };
  }

  it("a malformed pointer in isolate mode: one notice, then the default graph, as if not a worktree", async () => {
    const bad = dir(`bad-${++counter}`);
    writeFileSync(join(bad, ".git"), "gitdir:\n");
    const { shown, scope: isolated } = scope(bad, "isolate");
    expect(await isolated.resolve(noRunner)).toEqual({});
    expect(await isolated.resolve(noRunner)).toEqual({});
    expect(shown).toEqual([
      expect.stringMatching(/has a \.git file pi-cgc cannot follow .*without worktree isolation/),
    ]);
    expect(isolated.state.kind).toBe("shared");
    expect(isolated.subcommandArgs()).toEqual([]);
    expect(isolated.databaseRefusal()).toBeUndefined();
    expect(isolated.allowsWatcher()).toBe(true);
  });

  it("off mode: a linked worktree carries no context and nothing is refused or noticed", async () => {
    const { common } = mainCheckout();
    const worktree = linkedWorktree(common, "feature", "absolute");
    const { shown, scope: off } = scope(worktree, "off");
    expect(await off.resolve(noRunner)).toEqual({});
    expect(off.subcommandArgs()).toEqual([]);
    expect(off.serverEnv()).toEqual({});
    expect(off.databaseRefusal()).toBeUndefined();
    expect(off.describe()).toBe('linked worktree "feature" — shares the default graph (worktree.mode off)');
    expect(shown).toEqual([]);
  });

  it("isolate mode, before cgc was asked: every database call carries the context and none may run yet", () => {
    const { common } = mainCheckout();
    const worktree = linkedWorktree(common, "feature", "absolute");
    const { scope: isolated } = scope(worktree, "isolate");
    const name = contextNameFor({ commonDir: common, worktreeId: "feature" });
    expect(isolated.subcommandArgs()).toEqual(["--context", name]);
    expect(isolated.databaseRefusal()).toMatch(/has not been checked yet/);
    expect(isolated.serverEnv()).toEqual({});
    expect(isolated.allowsWatcher()).toBe(false);
  });

  it("a context it cannot record is not created, and the failure names the configured cgc", async () => {
    const { common } = mainCheckout();
    const worktree = linkedWorktree(common, "feature", "absolute");
    const agent = dir(`agent-${++counter}`);
    const notices = createNoticeLedger({ hasUI: true, notify: () => {}, stderr: () => {} });
    const isolated = createWorktreeScope({
      cwd: worktree,
      env: { PI_CODING_AGENT_DIR: agent },
      mode: "isolate",
      notices,
    });
    const executable = "/opt/cgc/bin/cgc";
    const asked: string[][] = [];
    const runner = {
      executable,
      run: async (args: string[]) => {
        asked.push(args);
        const listed = "\nCurrent Mode: global\n\nNo custom contexts defined. Using global default.\n";
        return { ...notRun([executable, ...args], "OK", ""), stderr: listed };
      },
    } as unknown as Runner;
    expect(await isolated.resolve(runner)).toEqual({ noGraph: expect.stringMatching(/does not exist yet/) });
    writeFileSync(worktreeRecordDir(agent), "a file where the records' folder belongs\n");
    const name = contextNameFor({ commonDir: common, worktreeId: "feature" });
    expect(await isolated.createContext(runner, undefined)).toMatchObject({
      code: "FAILED",
      argv: [executable, "context", "create", name],
    });
    expect(asked).toEqual([["context", "list"]]);
  });
});
