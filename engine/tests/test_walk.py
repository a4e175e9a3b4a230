"""The engine's kept walk of the tree (walk.KeptWalk, "The kept walk").

Each update asks which files the tree has, and cgc's discovery is run again only in the directories whose times
changed. After every kind of change the answer must be the one cgc's whole walk gives, while an edit inside a file
lists (almost) nothing again. Which folders changed the walk learns from the kernel (inotify) where it can, from
their times elsewhere: the same answers either way, and when the kernel dropped changes (its queue overflowed).
"""

from __future__ import annotations

import os
import shutil
import sys
import time
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple

import pytest

from pi_cgc_engine import walk
from pi_cgc_engine.context import RUN
from pi_cgc_engine.tree import Tree

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="the kernel's folder events are Linux's (inotify)")


def walk_report(cgc: Any, root: Path, outside: Path, mode: str, monkeypatch: pytest.MonkeyPatch) -> Dict[str, Any]:
    # How the walk learns which folders changed: the kernel's inotify queue (the default on Linux), each folder's
    # times (the stat test), or the queue for the first three folders and the stat test for the rest (a watch limit).
    if mode == "stat":
        RUN.options.dir_events = False
    elif mode == "few":
        monkeypatch.setattr(walk, "DIR_EVENTS_MAX", 3)

    def write(rel: str, text: str = "def f():\n    return 1\n") -> None:
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)

    for rel in ("a.py", "pkg/b.py", "pkg/sub/c.py", "pkg/sub/deep/d.py", "other/e.py", "other/notes.md", "big/x.py"):
        write(rel)
    for i in range(30):
        write(f"big/m{i}.py")
    write("big/hidden/h.py")  # a folder and files the rules leave out, in folders listed again below
    write("big/old_skip.py")
    (root / ".cgcignore").write_text("# test\n*_skip.py\nbig/hidden/\n")
    old = time.time() - 10  # folders last changed well before the first walk
    for folder, _, _ in os.walk(root):
        os.utime(folder, (old, old))

    tree = Tree(root, None)
    report: List[Dict[str, Any]] = []

    def check(step: str) -> None:
        kept = [p.as_posix() for p in tree.discover()]
        extensions = set(tree.builder.parsers)
        whole = [p.as_posix() for p in cgc.discover_files_to_index(root, None, supported_extensions=extensions)[0]]
        listed, reused = tree.kept_walk.last
        events = tree.kept_walk.events
        report.append({"step": step, "same": kept == whole, "files": len(whole), "listed": listed, "reused": reused,
                       "handed": tree.kept_walk.handed,
                       "watched": sum(d.wd >= 0 for d in tree.kept_walk.dirs.values()),
                       "overflowed": events is not None and events.overflowed,
                       "missing": sorted(set(whole) - set(kept))[:3], "extra": sorted(set(kept) - set(whole))[:3]})

    check("first walk")
    # Every folder here was made (its change time set) less than RACY_NS ago, so all would be listed again: the
    # counts of what is kept are read with the racy margin off, the answers after every change with it on.
    racy = walk.RACY_NS
    monkeypatch.setattr(walk, "RACY_NS", 0)
    write("pkg/sub/c.py", "def f():\n    return 2\n")
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
    monkeypatch.setattr(walk, "RACY_NS", racy)
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
    monkeypatch.setattr(walk, "RACY_NS", 0)  # pkg was just changed: only its link must make it listed again
    (outside / "target.py").write_text("def t():\n    return 0\n")
    check("the link's target created elsewhere")
    monkeypatch.setattr(walk, "RACY_NS", racy)
    (root / ".cgcignore").write_text("big/\n")
    check("an ignore rule added")
    (root / ".cgcignore").write_text("# none\n")
    check("the ignore rule removed")
    # A file system whose clock ticks coarsely (ext3 and HFS+ keep whole seconds, FAT two): two changes of a folder
    # within one tick leave its times equal. Stood for by times cut to 1 000 s, and the margin scaled with them.
    real_times = walk.dir_times

    def coarse_times(path: str) -> Optional[Tuple[int, int, int, int]]:
        times = real_times(path)
        return None if times is None else (times[0] // 10**12 * 10**12, times[1] // 10**12 * 10**12, times[2], times[3])

    monkeypatch.setattr(walk, "dir_times", coarse_times)
    monkeypatch.setattr(walk, "RACY_NS", 2 * 10**12)
    for i in range(3):
        write(f"big/quick_{i}_a.py")  # (not pkg: its link makes it listed every time)
        check(f"quick change {i}, first")
        write(f"big/quick_{i}_b.py")  # the same tick: the folder's times as they were
        check(f"quick change {i}, second")
    monkeypatch.setattr(walk, "dir_times", real_times)
    monkeypatch.setattr(walk, "RACY_NS", racy)
    # A folder replaced by another of its name (the old one moved out of the tree, a new one made).
    os.rename(root / "big/sub", outside / "sub_before")
    write("big/sub/z.py")
    check("a folder replaced by another of its name")
    # Again, the new one with a subfolder of the same name as one of the old one's: the old subfolder went out of the
    # tree with its parent, so nothing is queued for it, and its kept listing is not the new one's.
    write("big/sub/inner/old.py")
    check("a subfolder made")
    os.rename(root / "big/sub", outside / "sub_before_2")
    write("big/sub/inner/new.py")
    check("a folder replaced by another of its name with a subfolder of the same name")
    # More changes than the kernel queues (max_queued_events): the ones after are dropped, the walk must see them.
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
    here, proc = walk.DirEvents(str(root)), walk.DirEvents("/proc/self")
    gate = {"here": here.on, "proc": proc.on}
    here.close()
    proc.close()
    tree.kept_walk.close()
    return {"steps": report, "gate": gate}


@pytest.mark.parametrize("mode", [
    pytest.param("events", id="the kernel's queue of folder changes"),
    pytest.param("stat", id="each folder's times"),
    pytest.param("few", id="the queue for three folders, times for the rest (a watch limit)"),
])
def test_kept_walk_finds_what_cgcs_whole_walk_finds_after_every_change_listing_only_changed_folders(
        cgc: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, mode: str) -> None:
    root, outside = tmp_path / "tree", tmp_path / "outside"
    root.mkdir()
    outside.mkdir()
    found = walk_report(cgc, root.resolve(), outside.resolve(), mode, monkeypatch)
    report: List[Dict[str, Any]] = found["steps"]
    assert found["gate"] == {"here": mode != "stat", "proc": False}
    assert [entry for entry in report if not entry["same"]] == []

    def step(name: str) -> Dict[str, Any]:
        return next(entry for entry in report if entry["step"] == name)

    # An edit inside a file changes no folder: nothing is listed again. A new file: its folder only.
    assert (step("a file edited in place")["listed"], step("a file edited in place")["reused"]) == (0, 6)
    assert (step("a file added")["listed"], step("a file added")["reused"]) == (1, 5)
    # In a folder listed again, cgc judges only the entries it did not have before; the others keep their verdict.
    assert step("a file added")["handed"] == 1
    beside = step("files added beside files and a folder the rules leave out")
    assert (beside["listed"], beside["handed"]) == (1, 2)
    assert beside["files"] == step("a file added")["files"] + 1
    assert step("a link to a file not there yet")["files"] == step("files no parser reads")["files"] - 1
    assert step("the link's target created elsewhere")["files"] == step("a link to a file not there yet")["files"] + 1
    assert step("an ignore rule added")["files"] < step("the ignore rule removed")["files"]
    # Which way each folder was judged: every folder by its watch, none, or three.
    watched = [entry["watched"] for entry in report]
    if mode == "events":
        assert [entry for entry in report if entry["watched"] != entry["listed"] + entry["reused"]] == []
    if mode == "stat":
        assert all(count == 0 for count in watched)
    if mode == "few":
        assert max(watched) == 3
    # (with three watches the flooded folder may have none: its changes then never reach the queue)
    if mode != "few":
        assert step("a change after the kernel's queue overflowed")["overflowed"] is (mode == "events")
