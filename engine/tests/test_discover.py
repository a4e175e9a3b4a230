"""discover.py: the count the index confirmation states, read by cgc's own discovery, writing nothing."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from conftest import ENGINE_DIR


def test_counts_by_cgcs_discovery_and_leaves_nothing_behind(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    (repo / "pkg").mkdir(parents=True)
    (repo / "pkg" / "a.py").write_text("def a():\n    return 1\n")
    (repo / "pkg" / "b.js").write_text("function b() { return 2; }\n")
    (repo / "node_modules" / "dep").mkdir(parents=True)
    (repo / "node_modules" / "dep" / "c.js").write_text("function c() {}\n")  # cgc's default ignore
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    env = {**os.environ, "TMPDIR": str(scratch), "HOME": str(tmp_path / "home")}
    done = subprocess.run([sys.executable, str(ENGINE_DIR / "discover.py"), str(repo)], env=env,
                          capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    counted = json.loads(done.stdout.strip().splitlines()[-1])
    assert counted["files"] == 2
    assert counted["byExtension"] == {".js": 1, ".py": 1}
    # Asked before consent: no .cgcignore in the workspace, and its stand-in gone with the run.
    assert not (repo / ".cgcignore").exists()
    assert list(scratch.iterdir()) == []
