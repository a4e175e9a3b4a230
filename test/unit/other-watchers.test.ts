// Finding a `cgc watch` outside pi-cgc (src/cgc/other-watchers.ts): the argument lists cgc's watch commands
// show in /proc, and real `cgc watch` processes — one started as a user would (its own process group, not
// pi-cgc's child), and one pi-cgc started itself (a registered child), which is pi-cgc's own.
import { mkdirSync, mkdtempSync, readFileSync, realpathSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { registerChild, unregisterChild } from "../../src/cgc/children.ts";
import { otherWatchersOf, watchedDirOf, watchesRoot } from "../../src/cgc/other-watchers.ts";
import { cgcStart, type LongLivedCgc, makeCgcHome } from "../helpers/cgc-env.ts";
import { waitFor } from "../helpers/poll.ts";
import { stopOwnCgc } from "../reliability/support.ts";

const home = makeCgcHome();
const started: LongLivedCgc[] = [];
afterAll(async () => {
  for (const watcher of started) await stopOwnCgc(watcher);
  home.cleanup();
});

/** A real `cgc watch` of `dir`, once /proc shows cgc's argument list (not the forking Node's). */
async function watch(dir: string, cwd = dir): Promise<LongLivedCgc> {
  const watcher = cgcStart(["watch", dir === cwd ? "." : dir], { cwd, env: home.env });
  started.push(watcher);
  const pid = watcher.child.pid as number;
  await waitFor(() => readFileSync(`/proc/${pid}/cmdline`, "utf8").includes("\0watch\0"), "cgc's argument list");
  return watcher;
}

describe("the argument lists of cgc's watch commands", () => {
  const cwd = "/home/u/repo";
  it.each([
    [["/home/u/.venv/bin/python", "/home/u/.venv/bin/cgc", "watch", "."], "/home/u/repo"],
    [["/usr/bin/python3", "/usr/local/bin/cgc", "watch"], "/home/u/repo"],
    [["/usr/bin/python3", "/usr/local/bin/cgc", "w", "-c", "ctx", "sub"], "/home/u/repo/sub"],
    [["python3", "/x/cgc", "watch", "--poll", "--context", "c", "../other"], "/home/u/other"],
    [["python3", "-m", "codegraphcontext", "watch", "/srv/code"], "/srv/code"],
  ])("%j watches %s", (argv, dir) => {
    expect(watchedDirOf(argv, cwd)).toBe(dir);
  });

  it.each([
    [["/usr/bin/python3", "/usr/local/bin/cgc", "index", "."]],
    [["/usr/bin/python3", "/usr/local/bin/cgc", "watching"]],
    [["/usr/bin/python3", "watch.py", "."]],
    [["/usr/bin/watch", "-n", "1", "cgc", "stats"]],
    [["node", "pi"]],
  ])("%j is no cgc watch", (argv) => {
    expect(watchedDirOf(argv, cwd)).toBeUndefined();
  });

  it("a watcher sees the root when it watches it, a folder above it, or a folder inside it", () => {
    expect(watchesRoot("/home/u/repo", "/home/u/repo")).toBe(true);
    expect(watchesRoot("/home/u", "/home/u/repo")).toBe(true);
    expect(watchesRoot("/home/u/repo/pkg", "/home/u/repo")).toBe(true);
    expect(watchesRoot("/home/u/repo2", "/home/u/repo")).toBe(false);
  });
});

describe("real cgc watch processes", () => {
  const base = realpathSync(mkdtempSync(join(tmpdir(), "pi-cgc-other-watchers-")));
  const repo = join(base, "repo");
  const elsewhere = join(base, "elsewhere");
  mkdirSync(repo);
  mkdirSync(elsewhere);

  it("a user's cgc watch of the workspace (started in it, as `cgc watch .`) is found; one of another folder is not", async () => {
    const theirs = await watch(repo);
    const unrelated = await watch(elsewhere);
    const found = otherWatchersOf(repo);
    expect(found).toEqual([{ pid: theirs.child.pid, dir: repo }]);
    expect(found.map((w) => w.pid)).not.toContain(unrelated.child.pid);
    // Watching the folder above the workspace sees its files too.
    expect(otherWatchersOf(join(elsewhere, "sub")).map((w) => w.pid)).toEqual([unrelated.child.pid]);
    await stopOwnCgc(theirs);
    await stopOwnCgc(unrelated);
    expect(otherWatchersOf(repo)).toEqual([]);
  });

  it("pi-cgc's own watcher (a registered cgc child) is not another watcher", async () => {
    const own = await watch(repo, base);
    registerChild(own.child, 1_000);
    try {
      expect(otherWatchersOf(repo)).toEqual([]);
    } finally {
      unregisterChild(own.child);
    }
    expect(otherWatchersOf(repo)).toEqual([{ pid: own.child.pid, dir: repo }]);
    await stopOwnCgc(own);
  });
});
