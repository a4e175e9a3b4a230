// The change tracker on a real directory: each kind of change it must report, what it must not report
// twice, and the tree it remembers for the next session.
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readdirSync, renameSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { graphLedger } from "../../src/state/ledger.ts";
import { createChangeTracker } from "../../src/workspace/tracker.ts";
import { cgcIgnoredDirs, snapshotTree, stampPath, walkedByCgc } from "../../src/workspace/tree.ts";
import { venvPython } from "../helpers/engine.ts";

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
  writeFileSync(join(root, "README.md"), "a File node of its own, not parsed\n");
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
    writeFileSync(w.at("data.csv"), "not indexed\n");
    expect(w.tracker.check()).toEqual([w.at("new/deeper/c.py")]);
  });

  /** What cgc 0.6.13's own discovery finds under `root` (it writes its default .cgcignore there when none is). */
  function cgcDiscovers(root: string): string[] {
    const script =
      "import sys; from pathlib import Path\n" +
      "from codegraphcontext.tools.indexing.discovery import discover_files_to_index\n" +
      "exts = {'.py', '.tsx', '.js', '.sh'}\n" +
      "print('\\n'.join(str(p) for p in discover_files_to_index(Path(sys.argv[1]), None, supported_extensions=exts)[0]))\n";
    const found = spawnSync(venvPython(), ["-c", script, root], {
      encoding: "utf8",
      env: { ...process.env, HOME: join(root, "..", "home") },
    });
    expect(found.status, found.stderr).toBe(0);
    return found.stdout.trim().split("\n").sort();
  }

  function writeAll(w: ReturnType<typeof workspace>, files: string[]) {
    for (const file of files) {
      mkdirSync(dirname(w.at(file)), { recursive: true });
      writeFileSync(w.at(file), "x = 1\n");
    }
  }

  /** Every file under `root`, sorted. */
  const listAll = (root: string) =>
    readdirSync(root, { recursive: true, withFileTypes: true })
      .filter((entry) => entry.isFile())
      .map((entry) => join(entry.parentPath, entry.name))
      .sort();

  /** The tracker's files, less the root's .cgcignore (an ignore file, no node of the graph). */
  const trackedFiles = (w: ReturnType<typeof workspace>) =>
    [...snapshotTree(w.root).keys()].filter((path) => path !== w.at(".cgcignore")).sort();

  it("looks at every file cgc's own discovery indexes: generic files, hidden folders, names in any case", () => {
    const w = workspace();
    writeAll(w, [
      "notes.txt",
      "pyproject.toml",
      "Makefile",
      "Dockerfile",
      ".env",
      ".dockerignore",
      ".hidden.py",
      ".pi/cgc.json",
      ".github/workflows/ci.yml",
      "pkg/.gitignore",
      "pkg/run.sh",
      "Build/skipped.py",
      "node_modules/x/i.js",
      ".git/hooks/h.py",
      ".idea/x.py",
      "data.csv",
      "pkg/image.png",
      "src/App.tsx",
      "pkg/SHOUT.PY",
      "NOTES.MD",
    ]);
    const cgcFinds = cgcDiscovers(w.root);
    expect(cgcFinds).toContain(w.at(".github/workflows/ci.yml"));
    expect(trackedFiles(w)).toEqual(cgcFinds);
  });

  it("leaves out what the root's .gitignore and .cgcignore leave out of cgc's walk, and never more", () => {
    const w = workspace();
    writeAll(w, [
      "logs/a.py",
      "generated/b.py",
      "sub/generated/c.py",
      "x/cache/d.py",
      "docs/e.md",
      "docs/sub/f.md",
      ".venv-lite/lib/g.py",
      "pkg/secret.py",
      "pkg/kept.py",
      "obj/h.py",
      "vendor/v.py",
    ]);
    writeFileSync(w.at(".gitignore"), "logs/\n/generated\n**/cache/\ndocs/*.md\n.venv-lite/\n# a comment\nsecret.py\n");
    writeFileSync(w.at(".cgcignore"), "vendor/\n");
    const cgcFinds = cgcDiscovers(w.root);
    expect(cgcFinds).toContain(w.at("sub/generated/c.py"));
    expect(cgcFinds).not.toContain(w.at(".venv-lite/lib/g.py"));
    expect(trackedFiles(w)).toEqual(cgcFinds);
    // The same answer for one path at a time (a full rebuild's read-back: an ignored file is on disk, not in the graph).
    const walked = walkedByCgc(w.root);
    expect(listAll(w.root).filter((path) => walked(path) && path !== w.at(".cgcignore"))).toEqual(cgcFinds);
    // A negation: cgc can bring back a path git's rules cannot, so nothing is left out by the lines.
    writeFileSync(w.at(".cgcignore"), "vendor/\n!logs/\n");
    const withNegation = cgcDiscovers(w.root);
    expect(withNegation).toContain(w.at("logs/a.py"));
    const tracked = trackedFiles(w);
    expect(withNegation.filter((path) => !tracked.includes(path))).toEqual([]);
  });

  it("skips the folders cgc's own IGNORE_DIRS setting names, from the user's cgc config or the environment", () => {
    const w = workspace();
    writeAll(w, [".idea/i.py", "node_modules/n.js", "vendor/v.py", "Vendor/w.py"]);
    const home = join(w.root, "..", "home");
    mkdirSync(join(home, ".codegraphcontext"), { recursive: true });
    writeFileSync(
      join(home, ".codegraphcontext", ".env"),
      "DEFAULT_DATABASE=kuzudb\nIGNORE_DIRS=node_modules, vendor\n",
    );
    const cgcFinds = cgcDiscovers(w.root);
    expect(cgcFinds).toContain(w.at(".idea/i.py"));
    const tracked = (env: NodeJS.ProcessEnv) =>
      [...snapshotTree(w.root, undefined, cgcIgnoredDirs(env)).keys()]
        .filter((path) => path !== w.at(".cgcignore"))
        .sort();
    expect(tracked({ HOME: home })).toEqual(cgcFinds);
    expect(tracked({ HOME: home, IGNORE_DIRS: "node_modules" })).toContain(w.at("vendor/v.py"));
    expect(tracked({ HOME: join(home, "none") })).not.toContain(w.at(".idea/i.py")); // cgc's default
  });

  it("reports a change to the root's .cgcignore or .gitignore, and the files it adds to the graph or takes out", () => {
    const w = workspace();
    writeFileSync(w.at(".cgcignore"), "pkg/b.py\n");
    expect(w.tracker.check()).toEqual([w.at(".cgcignore"), w.at("pkg/b.py")]);
    writeFileSync(w.at("pkg/.gitignore"), "a.py\n"); // cgc reads only the root's rules, but indexes the file
    expect(w.tracker.check()).toEqual([w.at("pkg/.gitignore")]);
    writeFileSync(w.at(".gitignore"), "pkg/\n");
    expect(w.tracker.check()).toEqual([w.at(".gitignore"), w.at("pkg/.gitignore"), w.at("pkg/a.py")]);
    rmSync(w.at(".cgcignore"));
    expect(w.tracker.check()).toEqual([w.at(".cgcignore")]);
    rmSync(w.at(".gitignore"));
    expect(w.tracker.check()).toEqual([w.at(".gitignore"), w.at("pkg/.gitignore"), w.at("pkg/a.py"), w.at("pkg/b.py")]);
  });

  it("a tree remembered before ignore files were tracked takes them as unchanged; file times never count them", () => {
    const w = workspace();
    writeFileSync(w.at(".cgcignore"), "# written by cgc during its index, after the index time it records\n");
    // The record as pi-cgc wrote it before ignore files were tracked.
    const record = graphLedger(w.env, w.root).treeFile;
    mkdirSync(dirname(record), { recursive: true });
    const files = [w.at("pkg/a.py"), w.at("pkg/b.py")].map((path) => [path, stampPath(path)]);
    writeFileSync(record, JSON.stringify({ root: w.root, files }));
    expect(createChangeTracker(w.env).startDrift(w.root, Date.now() + 60_000)).toEqual({
      paths: [],
      basis: "remembered tree",
    });
    const fresh = createChangeTracker({ PI_CODING_AGENT_DIR: join(w.root, "..", "other-agent") });
    expect(fresh.startDrift(w.root, Date.now() - 1_000)).toEqual({
      paths: [w.at("README.md"), w.at("pkg/a.py"), w.at("pkg/b.py")],
      basis: "file times",
    });
  });

  it("a tree remembered before every indexed file was tracked judges the others by file times", () => {
    const w = workspace();
    mkdirSync(w.at(".pi"));
    writeFileSync(w.at(".pi/cgc.json"), "{}\n");
    const indexedAt = Date.now() + 60_000; // every file so far was there when the graph was built
    const record = graphLedger(w.env, w.root).treeFile;
    mkdirSync(dirname(record), { recursive: true });
    const files = [w.at("pkg/a.py"), w.at("pkg/b.py")].map((path) => [path, stampPath(path)]);
    writeFileSync(record, JSON.stringify({ root: w.root, ignoreFiles: true, files }));
    expect(createChangeTracker(w.env).startDrift(w.root, indexedAt)).toEqual({ paths: [], basis: "remembered tree" });
    // Written after the index: reported, as the file-time fallback would.
    expect(createChangeTracker(w.env).startDrift(w.root, Date.now() - 1_000)).toEqual({
      paths: [w.at(".pi/cgc.json"), w.at("README.md")],
      basis: "remembered tree",
    });
    // A record written now tracks them all: a generic file deleted while pi was away is seen.
    const tracker = createChangeTracker(w.env);
    tracker.startDrift(w.root, indexedAt);
    tracker.remember();
    rmSync(w.at("README.md"));
    expect(createChangeTracker(w.env).startDrift(w.root, indexedAt)).toEqual({
      paths: [w.at("README.md")],
      basis: "remembered tree",
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
      paths: [w.at("README.md"), w.at("pkg/a.py"), w.at("pkg/b.py")],
      basis: "file times",
    });
  });
});
