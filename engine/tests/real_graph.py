"""What the tests that run the real engine on real cgc and KùzuDB share: a small Python tree, a private HOME, cgc's
own index, the engine's serve and its canonical dump (`dump --dangling`)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any, Dict, List, Optional

ENGINE_DIR = Path(__file__).resolve().parent.parent
ENTRY = ENGINE_DIR / "pi-cgc-engine.py"
CGC = Path(sys.executable).parent / "cgc"

FILES = {
    "pkg/__init__.py": "",
    "pkg/shapes.py": "class Shape:\n    def area(self):\n        return 0\n\n\nclass Square(Shape):\n"
                     "    def __init__(self, side):\n        self.side = side\n\n    def area(self):\n"
                     "        return self.side * self.side\n",
    "pkg/use.py": "from pkg.shapes import Square\n\n\ndef total(sides):\n    return sum(Square(s).area() for s in sides)\n",
    "pkg/more.py": "from pkg.use import total\n\n\ndef report(values):\n    \"\"\"The total, as text.\"\"\"\n"
                   "    return f'{total(values)}'\n",
}


def make_tree(parent: Path, files: Optional[Dict[str, str]] = None) -> Path:
    root = parent / "repo"
    for name, text in (FILES if files is None else files).items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text, encoding="utf-8")
    return root


def env_of(home: Path) -> Dict[str, str]:
    keep = {k: v for k, v in os.environ.items() if k in ("PATH", "LANG", "TREE_SITTER_LANGUAGE_PACK_LIBS_DIR")}
    home.mkdir(parents=True, exist_ok=True)
    return {**keep, "HOME": str(home), "COLUMNS": "10000", "ENABLE_AUTO_WATCH": "false", "PYTHONSAFEPATH": "1"}


def run(argv: List[str], root: Path, env: Dict[str, str]) -> subprocess.CompletedProcess[str]:
    """The engine's command line (or any script) by this interpreter."""
    return subprocess.run([sys.executable, *argv], cwd=root, env=env, capture_output=True, text=True, timeout=600)


def cgc_index(root: Path, env: Dict[str, str]) -> None:
    done = subprocess.run([str(CGC), "index", "--force", str(root)], cwd=root, env=env, capture_output=True,
                          text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]


def dump(root: Path, env: Dict[str, str]) -> List[str]:
    out = root.parent / "dump.txt"
    done = run([str(ENTRY), "dump", "--root", str(root), "--out", str(out), "--dangling"], root, env)
    assert done.returncode == 0, done.stderr[-2000:]
    return out.read_text(encoding="utf-8").splitlines()


def cgc_own_dump(tmp: Path, tree: Path) -> List[str]:
    """cgc's own full index of a copy of `tree` (same basename, so the dumps compare line for line)."""
    copy = tmp / "fresh" / tree.name
    shutil.rmtree(copy.parent, ignore_errors=True)
    shutil.copytree(tree, copy)
    env = env_of(tmp / "fresh-home")
    cgc_index(copy, env)
    return dump(copy, env)


def serve(root: Path, env: Dict[str, str], cache: Path, requests: List[Dict[str, Any]],
          *flags: str) -> List[Dict[str, Any]]:
    """The engine's answers: the ready line, then one per request."""
    lines = "".join(json.dumps({"id": at, **request}) + "\n" for at, request in enumerate(requests))
    done = subprocess.run([sys.executable, str(ENTRY), "serve", "--root", str(root), "--cache-dir", str(cache),
                           "--hold-ms", "0", *flags], cwd=root, env=env, input=lines, capture_output=True, text=True,
                          timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    return [json.loads(line) for line in done.stdout.splitlines() if line.strip()]


def pi_cgc_index(root: Path, env: Dict[str, str], cache: Path, *flags: str) -> str:
    """pi-cgc's own index of `root` (its output)."""
    done = run([str(ENTRY), "--cache-dir", str(cache), "index", *flags, str(root)], root.parent, env)
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout + done.stderr
