"""The engine's cache is private and checked (issue 36, point 3): its folder is 0700 and its files 0600; a cache
in a folder or a file that the group or others can write, or that another user owns, is a cold start said once as
"cache ignored: …"; and a foreign or garbled file never runs code — a pickle whose load would create a marker
file leaves no marker. The cache a real index leaves loads back through the same checks."""

from __future__ import annotations

import os
import pickle
import stat
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace
from typing import Any, List

import pytest
from test_index_faults import ENTRY, env_of, make_tree

from pi_cgc_engine.cache import CACHE_FORMAT, CacheKeeping, private_loads
from pi_cgc_engine.files import FileEntry
from pi_cgc_engine.tree_state import TreeState

VERSION = "0.6.13"


class Keeper(CacheKeeping):
    """The cache half of the engine, with what it reads of the rest: the root, the version, the database's
    binder failures and the state."""

    def __init__(self, folder: Path, root: Path, backend: str = "kuzudb") -> None:
        self.root = root
        self.version = VERSION
        self.db = SimpleNamespace(binder_failures={}, backend=backend)  # type: ignore[assignment]
        self.state = TreeState()
        self.cache_file = folder / "graph.pickle"
        self.cached_state = None
        self.saving = None
        self.ending = []
        self.trusted = True
        self.unknown = set()
        self.last_save_s = 0.0


def saved(tmp_path: Path) -> Keeper:
    keeper = Keeper(tmp_path / "engine" / "abc", tmp_path / "repo")
    keeper.state.files["a.py"] = FileEntry.__new__(FileEntry)
    keeper.save_cache()
    return keeper


def ignored(capsys: pytest.CaptureFixture[str]) -> List[str]:
    return [line for line in capsys.readouterr().err.splitlines() if "cache ignored: " in line]


def test_the_folder_is_0700_and_its_files_0600(tmp_path: Path) -> None:
    keeper = saved(tmp_path)
    assert keeper.cache_file is not None
    assert stat.S_IMODE(keeper.cache_file.parent.stat().st_mode) == 0o700
    assert stat.S_IMODE(keeper.cache_file.stat().st_mode) == 0o600
    keeper.distrust()  # a marker
    marker = keeper.untrusted_marker()
    assert marker is not None and stat.S_IMODE(marker.stat().st_mode) == 0o600
    # A folder made by someone else's umask (pi's side makes it with mkdir -p) is made 0700 at the next load.
    keeper.cache_file.parent.chmod(0o755)
    Keeper(keeper.cache_file.parent, keeper.root).load_cache()
    assert stat.S_IMODE(keeper.cache_file.parent.stat().st_mode) == 0o700


def test_a_private_cache_loads_back(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    keeper = saved(tmp_path)
    assert keeper.cache_file is not None
    assert list(Keeper(keeper.cache_file.parent, keeper.root).load_cache()) == ["a.py"]
    assert ignored(capsys) == []


def test_a_cache_another_backend_saved_is_a_cold_start(tmp_path: Path) -> None:
    """A parse is marked by what its backend cannot write (on FalkorDB, a NUL in a docstring), so a cache is the
    model of its own backend's graph only."""
    keeper = saved(tmp_path)
    assert keeper.cache_file is not None
    assert list(Keeper(keeper.cache_file.parent, keeper.root, "falkordb").load_cache()) == []
    assert list(Keeper(keeper.cache_file.parent, keeper.root, "kuzudb").load_cache()) == ["a.py"]


def test_a_load_removes_the_saves_of_processes_gone_not_those_under_way(tmp_path: Path) -> None:
    """A save aside or an index's state saved ahead of its load is a `.saving` file named by its process: the
    next load removes those whose process is gone (killed mid-save), never one a running index still installs."""
    keeper = saved(tmp_path)
    assert keeper.cache_file is not None
    folder, stem = keeper.cache_file.parent, keeper.cache_file.stem
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()
    running = subprocess.Popen([sys.executable, "-c", "import sys; sys.stdin.read()"], stdin=subprocess.PIPE)
    try:
        left = folder / f"{stem}.{gone.pid}-index.saving"
        under_way = folder / f"{stem}.{running.pid}-index.saving"
        for path in (left, under_way):
            path.write_bytes(b"")
        Keeper(folder, keeper.root).load_cache()
        assert (left.exists(), under_way.exists()) == (False, True)
    finally:
        running.communicate(b"")


@pytest.mark.parametrize("mode", [0o620, 0o602], ids=["group-writable", "writable by others"])
def test_a_cache_file_others_can_write_is_ignored_once(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                       mode: int) -> None:
    keeper = saved(tmp_path)
    assert keeper.cache_file is not None
    keeper.cache_file.chmod(mode)
    assert Keeper(keeper.cache_file.parent, keeper.root).load_cache() == {}
    said = ignored(capsys)
    assert len(said) == 1 and "writable by" in said[0] and str(keeper.cache_file) in said[0], said


def test_a_cache_in_a_group_writable_folder_is_ignored_and_the_folder_made_private(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    keeper = saved(tmp_path)
    assert keeper.cache_file is not None
    folder = keeper.cache_file.parent
    folder.chmod(0o770)
    assert Keeper(folder, keeper.root).load_cache() == {}
    said = ignored(capsys)
    assert len(said) == 1 and "writable by its group" in said[0], said
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700


def test_a_cache_another_user_owns_is_ignored(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    keeper = saved(tmp_path)
    assert keeper.cache_file is not None
    if os.getuid() == 0:
        os.chown(keeper.cache_file, 65534, 65534)
        owner = "uid 65534"
    else:
        # Only root can give a file away: the engine is made to run as another user instead (os.getuid).
        monkeypatch.setattr(os, "getuid", lambda: 65534)
        owner = f"uid {keeper.cache_file.stat().st_uid}"
    assert Keeper(keeper.cache_file.parent, keeper.root).load_cache() == {}
    said = ignored(capsys)
    assert len(said) == 1 and f"owned by {owner}" in said[0], said


def test_a_symlink_in_place_of_the_cache_is_ignored(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    keeper = saved(tmp_path)
    assert keeper.cache_file is not None
    elsewhere = tmp_path / "elsewhere.pickle"
    keeper.cache_file.rename(elsewhere)
    keeper.cache_file.symlink_to(elsewhere)
    assert Keeper(keeper.cache_file.parent, keeper.root).load_cache() == {}
    assert "is not a regular file" in ignored(capsys)[0]


class Planted:
    """What a planted cache does: its load calls a function of the file's choosing (here one that creates a
    marker file: os.system, builtins.exec, or the engine's own write_private)."""

    def __init__(self, how: str, marker: Path) -> None:
        self.how, self.marker = how, marker

    def __reduce__(self) -> Any:
        if self.how == "os.system":
            return (os.system, (f"touch {self.marker}",))
        if self.how == "builtins.exec":
            return (exec, (f"open({str(self.marker)!r}, 'w').close()",))
        from pi_cgc_engine.cache import write_private
        return (write_private, (self.marker, "planted\n"))


@pytest.mark.parametrize("how", ["os.system", "builtins.exec", "the engine's own function"])
def test_a_planted_cache_never_runs_code(tmp_path: Path, capsys: pytest.CaptureFixture[str], how: str) -> None:
    keeper = saved(tmp_path)
    assert keeper.cache_file is not None
    marker = tmp_path / "ran"
    # The planted pickle is what an unchecked pickle.load would run: it does create the marker.
    planted = pickle.dumps({"cgc": VERSION, "root": keeper.root.as_posix(), "format": CACHE_FORMAT,
                            "state": Planted(how, marker)})
    pickle.loads(planted)
    assert marker.exists()
    marker.unlink()
    # Private, owned by the user: only the loader stands between the file and the code it names.
    keeper.cache_file.write_bytes(planted)
    assert Keeper(keeper.cache_file.parent, keeper.root).load_cache() == {}
    assert not marker.exists()
    said = ignored(capsys)
    assert len(said) == 1 and "which is not one of the engine's own classes" in said[0], said


@pytest.mark.parametrize("garbled", [b"", b"\x80\x05garbage", b"not a pickle at all", os.urandom(4096)],
                         ids=["empty", "truncated", "text", "random"])
def test_a_garbled_cache_is_a_cold_start(tmp_path: Path, capsys: pytest.CaptureFixture[str], garbled: bytes) -> None:
    keeper = saved(tmp_path)
    assert keeper.cache_file is not None
    keeper.cache_file.write_bytes(garbled)
    assert Keeper(keeper.cache_file.parent, keeper.root).load_cache() == {}
    assert len(ignored(capsys)) == 1


def test_the_cache_a_real_index_leaves_loads_through_the_checks(tmp_path: Path) -> None:
    root, env = make_tree(tmp_path), env_of(tmp_path / "home")
    cache = tmp_path / "cache"
    done = subprocess.run([sys.executable, str(ENTRY), "--cache-dir", str(cache), "index", str(root)], cwd=root,
                          env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    [file] = cache.glob("*.pickle")
    assert stat.S_IMODE(cache.stat().st_mode) == 0o700
    assert stat.S_IMODE(file.stat().st_mode) == 0o600
    blob = private_loads(file.read_bytes())
    assert isinstance(blob["state"], TreeState)
    assert sorted(blob["state"].files) == sorted(str(root / name) for name in
                                                 ("pkg/__init__.py", "pkg/shapes.py", "pkg/use.py", "pkg/more.py"))
