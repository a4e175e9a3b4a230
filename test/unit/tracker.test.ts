// The change tracker on a real directory: each kind of change it must report, what it must not report
// twice, and the tree it remembers for the next session.
import { mkdirSync, mkdtempSync, renameSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { graphRecordPath } from "../../src/state/records.ts";
import { createChangeTracker } from "../../src/workspace/tracker.ts";
import { stampPath } from "../../src/workspace/tree.ts";

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function workspace() {
  const top = mkdtempSync(join(tmpdir(), "pi-cgc-tracker-"));
  dirs.push(top);
  const root = join(top, "repo");
  mkdirSync(join(root, "pkg"), { recursive: true });
  writeFileSync(join(root, "pkg", "a.py"), "def a():\n    return 1\n");
  writeFileSync(join(root, "pkg", "b.py"), "def b():\n    return 2\n");
  writeFileSync(join(root, "README.md"), "not source\n");
  const env = { PI_CODING_AGENT_DIR: join(top, "agent") };
  const tracker = createChangeTracker(env);
  tracker.startDrift(root, Date.now() + 60_000);
  return { root, env, tracker, at: (path: string) => join(root, path) };
}

describe("the change tracker", () => {
  it("reports nothing for an untouched tree, and a change once", () => {
    const w = workspace();
    expect(w.tracker.check()).toEqual([]);
    writeFileSync(w.at("pkg/a.py"), "def a():\n    return 3\n");
    expect(w.tracker.check()).toEqual([w.at("pkg/a.py")]);
    expect(w.tracker.check()).toEqual([]);
  });

  it("reports a deleted file", () => {
    const w = workspace();
    rmSync(w.at("pkg/b.py"));
    expect(w.tracker.check()).toEqual([w.at("pkg/b.py")]);
  });

  it("reports both sides of a rename or move, which keeps the modification time", () => {
    const w = workspace();
    mkdirSync(w.at("lib"));
    renameSync(w.at("pkg/a.py"), w.at("lib/moved.py"));
    expect(w.tracker.check()).toEqual([w.at("lib/moved.py"), w.at("pkg/a.py")]);
  });

  it("reports a file whose old modification time was put back, even at the same size", () => {
    const w = workspace();
    const old = new Date("2001-02-03T04:05:06Z");
    utimesSync(w.at("pkg/a.py"), old, old);
    w.tracker.check();
    writeFileSync(w.at("pkg/a.py"), "def z():\n    return 1\n"); // same length as before
    utimesSync(w.at("pkg/a.py"), old, old);
    expect(w.tracker.check()).toEqual([w.at("pkg/a.py")]);
  });

  it("reports a new file in a new folder, and ignores what cgc ignores", () => {
    const w = workspace();
    mkdirSync(w.at("new/deeper"), { recursive: true });
    writeFileSync(w.at("new/deeper/c.py"), "def c():\n    return 3\n");
    mkdirSync(w.at("node_modules/x"), { recursive: true });
    writeFileSync(w.at("node_modules/x/index.js"), "module.exports = 1;\n");
    writeFileSync(w.at("notes.txt"), "not source\n");
    expect(w.tracker.check()).toEqual([w.at("new/deeper/c.py")]);
  });

  it("reports a change to the root's .cgcignore or .gitignore, which adds files to the graph or takes them out", () => {
    const w = workspace();
    writeFileSync(w.at(".cgcignore"), "pkg/b.py\n");
    expect(w.tracker.check()).toEqual([w.at(".cgcignore")]);
    writeFileSync(w.at(".gitignore"), "pkg/\n");
    mkdirSync(w.at("pkg/.hidden"));
    writeFileSync(w.at("pkg/.gitignore"), "a.py\n"); // not read by cgc: only the root's
    expect(w.tracker.check()).toEqual([w.at(".gitignore")]);
    rmSync(w.at(".cgcignore"));
    expect(w.tracker.check()).toEqual([w.at(".cgcignore")]);
  });

  it("a tree remembered before ignore files were tracked takes them as unchanged; file times never count them", () => {
    const w = workspace();
    writeFileSync(w.at(".cgcignore"), "# written by cgc during its index, after the index time it records\n");
    // The record as pi-cgc wrote it before ignore files were tracked.
    const record = graphRecordPath(w.env, w.root, "trees");
    mkdirSync(dirname(record), { recursive: true });
    const files = [w.at("pkg/a.py"), w.at("pkg/b.py")].map((path) => [path, stampPath(path)]);
    writeFileSync(record, JSON.stringify({ root: w.root, files }));
    expect(createChangeTracker(w.env).startDrift(w.root, Date.now() + 60_000)).toEqual({
      paths: [],
      basis: "remembered tree",
    });
    const fresh = createChangeTracker({ PI_CODING_AGENT_DIR: join(w.root, "..", "other-agent") });
    expect(fresh.startDrift(w.root, Date.now() - 1_000)).toEqual({
      paths: [w.at("pkg/a.py"), w.at("pkg/b.py")],
      basis: "file times",
    });
  });

  it("does not report again what the session observed itself", () => {
    const w = workspace();
    writeFileSync(w.at("pkg/a.py"), "def a():\n    return 4\n");
    rmSync(w.at("pkg/b.py"));
    w.tracker.observed([w.at("pkg/a.py"), w.at("pkg/b.py")]);
    expect(w.tracker.check()).toEqual([]);
  });

  it("remembers the verified tree: the next session's start sees deletions and renames made while pi was away", () => {
    const w = workspace();
    w.tracker.remember();
    rmSync(w.at("pkg/b.py"));
    renameSync(w.at("pkg/a.py"), w.at("pkg/renamed.py"));
    const next = createChangeTracker(w.env);
    expect(next.startDrift(w.root, Date.now() + 60_000)).toEqual({
      paths: [w.at("pkg/a.py"), w.at("pkg/b.py"), w.at("pkg/renamed.py")],
      basis: "remembered tree",
    });
  });

  it("without a remembered tree, falls back to files written, renamed or restored after the index time", () => {
    const w = workspace();
    const indexedAt = Date.now() - 1_000;
    const old = new Date("2001-02-03T04:05:06Z");
    utimesSync(w.at("pkg/a.py"), old, old); // an old modification time, but a new status-change time
    const fresh = createChangeTracker({ PI_CODING_AGENT_DIR: join(w.root, "..", "other-agent") });
    expect(fresh.startDrift(w.root, indexedAt)).toEqual({
      paths: [w.at("pkg/a.py"), w.at("pkg/b.py")],
      basis: "file times",
    });
  });
});
