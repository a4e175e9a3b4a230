"""The engine stopped as pi-cgc stops it at a session's end (SIGINT to its group, SIGTERM after a grace period)
right after an update, its database still held: the state it holds is saved as the graph's model, so the next
session's engine starts from it trusted (an untrusted start writes every file's links again at its first edit).
Real cgc and KùzuDB in a private HOME."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

from test_index_faults import ENTRY, env_of, make_tree, run


def serve(root: Path, cache: Path, env: dict) -> subprocess.Popen[str]:
    # --hold-ms: the database stays held after the update, as within a second of an edit in a session.
    return subprocess.Popen([sys.executable, str(ENTRY), "serve", "--root", str(root), "--cache-dir", str(cache),
                             "--hold-ms", "60000"], cwd=root, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


def test_a_stop_right_after_an_update_leaves_the_graphs_model_for_the_next_start(tmp_path: Path) -> None:
    root, env = make_tree(tmp_path), env_of(tmp_path / "home")
    cache = tmp_path / "cache"
    done = run([str(ENTRY), "--cache-dir", str(cache), "index", str(root)], root, env)
    assert done.returncode == 0, done.stderr[-2000:]
    engine = serve(root, cache, env)
    assert engine.stdin is not None and engine.stdout is not None
    ready = json.loads(engine.stdout.readline())
    assert (ready["warm"], ready["trusted"]) == (True, True), ready
    edited = root / "pkg" / "use.py"
    edited.write_text(edited.read_text(encoding="utf-8") + "\n\ndef doubled(sides):\n    return 2 * total(sides)\n",
                      encoding="utf-8")
    engine.stdin.write(json.dumps({"id": 1, "op": "update", "paths": [str(edited)]}) + "\n")
    engine.stdin.flush()
    answer = json.loads(engine.stdout.readline())
    assert answer["ok"], answer
    # pi-cgc's stop, its grace period cut to nothing: SIGINT, then SIGTERM at once.
    os.kill(engine.pid, signal.SIGINT)
    os.kill(engine.pid, signal.SIGTERM)
    _, errors = engine.communicate(timeout=120)
    assert engine.returncode == 0, errors[-2000:]
    assert [path.suffix for path in cache.iterdir()] == [".pickle"], errors[-2000:]  # no untrusted marker
    again = serve(root, cache, env)
    out, errors = again.communicate('{"id": 1, "op": "shutdown"}\n', timeout=120)
    ready = json.loads(out.splitlines()[0])
    assert (ready["warm"], ready["trusted"], ready["files"]) == (True, True, 4), errors[-2000:]
