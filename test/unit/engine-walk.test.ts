// The engine's kept walk (engine/pi_cgc_engine.py, "The kept walk"): each update asks which files the tree has,
// and cgc's discovery is run again only in the directories whose times changed. After every kind of change
// the answer must be the one cgc's whole walk gives, while an edit inside a file lists (almost) nothing again.
// Which folders changed the walk learns from the kernel (inotify) where it can, from their times elsewhere: the
// same answers either way, and when the kernel dropped changes (its queue overflowed).
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { PROJECT_ROOT } from "../helpers/cgc-env.ts";
import { engineScriptReport } from "../helpers/engine.ts";

const SCRIPT = `
import os, shutil, sys, time
from pathlib import Path
sys.path.insert(0, ${JSON.stringify(join(PROJECT_ROOT, "engine"))})
import pi_cgc_engine as engine
engine.load_cgc()

root = Path(sys.argv[1]).resolve()
outside = Path(sys.argv[2]).resolve()
# How the walk learns which folders changed: the kernel's inotify queue (the default on Linux), each folder's
# times (the stat test), or the queue for the first three folders and the stat test for the rest (a watch limit).
mode = sys.argv[3]
if mode == "stat":
    os.environ["PI_CGC_ENGINE_DIR_EVENTS"] = "0"
elif mode == "few":
    engine.DIR_EVENTS_MAX = 3
def write(rel, text="def f():\\n    return 1\\n"):
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)

for rel in ("a.py", "pkg/b.py", "pkg/sub/c.py", "pkg/sub/deep/d.py", "other/e.py", "other/notes.md", "big/x.py"):
    write(rel)
for i in range(30):
    write(f"big/m{i}.py")
write("big/hidden/h.py")  # a folder and files the rules leave out, in folders listed again below
write("big/old_skip.py")
(root / ".cgcignore").write_text("# test\\n*_skip.py\\nbig/hidden/\\n")
old = time.time() - 10  # folders last changed well before the first walk
for folder, _, _ in os.walk(root):
    os.utime(folder, (old, old))

tree = engine.Tree(root, None)
report = []
def check(step):
    kept = [p.as_posix() for p in tree.discover()]
    whole = [p.as_posix() for p in engine.discover_files_to_index(root, None, supported_extensions=set(tree.builder.parsers))[0]]
    listed, reused = tree.kept_walk.last
    events = tree.kept_walk.events
    report.append({"step": step, "same": kept == whole, "files": len(whole), "listed": listed, "reused": reused,
                   "handed": tree.kept_walk.handed, "watched": sum(d.wd >= 0 for d in tree.kept_walk.dirs.values()),
                   "overflowed": events is not None and events.overflowed,
                   "missing": sorted(set(whole) - set(kept))[:3], "extra": sorted(set(kept) - set(whole))[:3]})

check("first walk")
# Every folder here was made (its change time set) less than RACY_NS ago, so all would be listed again: the
# counts of what is kept are read with the racy margin off, the answers after every change with it on.
racy, engine.RACY_NS = engine.RACY_NS, 0
write("pkg/sub/c.py", "def f():\\n    return 2\\n")
check("a file edited in place")
write("pkg/new.py")
check("a file added")
write("big/new_skip.py")
write("big/m30.py")
check("files added beside files and a folder the rules leave out")
os.remove(root / "big/m30.py")
os.mkdir(root / "big/m30.py")
check("a file replaced by a folder of its name, at once")
os.rmdir(root / "big/m30.py")
write("big/m30.py")
check("that folder replaced by a file of its name")
os.remove(root / "big/m5.py")
os.mkfifo(root / "big/m5.py")  # the same name, no longer a regular file: cgc's is_file says no
check("a file replaced by a pipe of its name")
engine.RACY_NS = racy
write("pkg/sub/fresh/deeper/n.py")
check("new folders with a file")
os.remove(root / "pkg/sub/deep/d.py")
check("a file deleted")
shutil.rmtree(root / "other")
check("a folder deleted")
os.rename(root / "a.py", root / "pkg/a_moved.py")
check("a file moved (its time kept)")
os.rename(root / "pkg/sub", root / "big/sub")
check("a folder moved")
write("big/readme.txt", "not code")
write("big/data.bin", "no parser")
check("files no parser reads")
os.remove(root / "big/m3.py")
os.mkdir(root / "big/m3.py")
check("a file replaced by a folder of its name")
os.symlink(outside / "target.py", root / "pkg/link.py")
check("a link to a file not there yet")
engine.RACY_NS = 0  # pkg was just changed: only its link must make it listed again
(outside / "target.py").write_text("def t():\\n    return 0\\n")
check("the link's target created elsewhere")
engine.RACY_NS = racy
(root / ".cgcignore").write_text("big/\\n")
check("an ignore rule added")
(root / ".cgcignore").write_text("# none\\n")
check("the ignore rule removed")
# A file system whose clock ticks coarsely (ext3 and HFS+ keep whole seconds, FAT two): two changes of a folder
# within one tick leave its times equal. Stood for by times cut to 1 000 s, and the margin scaled with them.
real_times = engine._dir_times
def coarse_times(path):
    times = real_times(path)
    return None if times is None else (times[0] // 10**12 * 10**12, times[1] // 10**12 * 10**12, times[2], times[3])
engine._dir_times = coarse_times
engine.RACY_NS = 2 * 10**12
for i in range(3):
    write(f"big/quick_{i}_a.py")  # (not pkg: its link makes it listed every time)
    check(f"quick change {i}, first")
    write(f"big/quick_{i}_b.py")  # the same tick: the folder's times as they were
    check(f"quick change {i}, second")
engine._dir_times, engine.RACY_NS = real_times, racy
# A folder replaced by another of its name (the old one moved out of the tree, a new one made).
os.rename(root / "big/sub", outside / "sub_before")
write("big/sub/z.py")
check("a folder replaced by another of its name")
# Again, the new one with a subfolder of the same name as one of the old one's: the old subfolder went out of the tree
# with its parent, so nothing is queued for it, and its kept listing is not the new one's.
write("big/sub/inner/old.py")
check("a subfolder made")
os.rename(root / "big/sub", outside / "sub_before_2")
write("big/sub/inner/new.py")
check("a folder replaced by another of its name with a subfolder of the same name")
# More changes than the kernel queues (max_queued_events): the ones after are dropped, the walk must see them anyway.
write("flood/keep.py")
check("a new folder")
limit = int(Path("/proc/sys/fs/inotify/max_queued_events").read_text())
for i in range(limit + 100):
    (root / "flood" / f"f{i}.txt").touch()
write("big/after_the_flood.py")  # (not pkg: its link makes it listed every time)
check("a change after the kernel's queue overflowed")
shutil.rmtree(root / "flood")
check("the flooded folder deleted")
# The kernel is asked only on a file system whose every change it sees: not on /proc (nor NFS, SMB, FUSE, 9p).
gate = {"here": engine.DirEvents(str(root)).on, "proc": engine.DirEvents("/proc/self").on}
engine.emit({"report": {"steps": report, "gate": gate}})
`;

const scratch = mkdtempSync(join(tmpdir(), "pi-cgc-walk-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

type Step = {
  step: string;
  same: boolean;
  files: number;
  listed: number;
  reused: number;
  handed: number;
  watched: number;
  overflowed: boolean;
};

describe("the engine's kept walk of the tree", () => {
  it.each([
    ["the kernel's queue of folder changes", "events"],
    ["each folder's times", "stat"],
    ["the queue for three folders, times for the rest (a watch limit)", "few"],
  ])(
    "told which folders changed by %s: finds what cgc's whole walk finds after every kind of change, listing again only the changed folders",
    (_how, mode) => {
      const root = join(scratch, mode, "tree");
      const outside = join(scratch, mode, "outside");
      spawnSync("mkdir", ["-p", root, outside]);
      const { steps: report, gate } = engineScriptReport<{ steps: Step[]; gate: { here: boolean; proc: boolean } }>(
        SCRIPT,
        [root, outside, mode],
      );
      expect(gate).toEqual({ here: mode !== "stat", proc: false });
      expect(report.filter((entry) => !entry.same)).toEqual([]);
      const step = (name: string) => report.find((entry) => entry.step === name);
      // An edit inside a file changes no folder: nothing is listed again. A new file: its folder only.
      expect(step("a file edited in place")).toMatchObject({ listed: 0, reused: 6 });
      expect(step("a file added")).toMatchObject({ listed: 1, reused: 5 });
      // In a folder listed again, cgc judges only the entries it did not have before; the others keep their verdict.
      expect(step("a file added")?.handed).toBe(1);
      expect(step("files added beside files and a folder the rules leave out")).toMatchObject({ listed: 1, handed: 2 });
      expect(step("files added beside files and a folder the rules leave out")?.files).toBe(
        (step("a file added")?.files ?? 0) + 1,
      );
      expect(step("a link to a file not there yet")?.files).toBe((step("files no parser reads")?.files ?? 0) - 1);
      expect(step("the link's target created elsewhere")?.files).toBe(
        (step("a link to a file not there yet")?.files ?? 0) + 1,
      );
      expect(step("an ignore rule added")?.files).toBeLessThan(step("the ignore rule removed")?.files ?? 0);
      // Which way each folder was judged: every folder by its watch, none, or three.
      const watched = report.map((entry) => entry.watched);
      if (mode === "events")
        expect(report.filter((entry) => entry.watched !== entry.listed + entry.reused)).toEqual([]);
      if (mode === "stat") expect(watched.every((count) => count === 0)).toBe(true);
      if (mode === "few") expect(Math.max(...watched)).toBe(3);
      // (with three watches the flooded folder may have none: its changes then never reach the queue)
      if (mode !== "few")
        expect(step("a change after the kernel's queue overflowed")?.overflowed).toBe(mode === "events");
    },
  );
});
