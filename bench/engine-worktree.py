"""A new linked worktree's graph from its main checkout's, against pi-cgc's full index of the same worktree, side by
side in one run (KùzuDB).

  .venv/bin/python bench/engine-worktree.py [--sizes 1000] [--names proj-fix-parser] [--work DIR]

For each size: the first N Python files of this interpreter's standard library committed in `proj`, indexed by
pi-cgc's index (its engine cache kept); a linked worktree one commit apart (a function appended to a file, a file
deleted, one added) in a folder beside it, named by --names (the name decides how many files cgc resolves
differently there: docs/engine.md, "A new worktree from its main checkout's graph"). Then, in one HOME:

1. `index WT --context wt-moved --from-main proj --main-cache-dir D`: the worktree's graph from the main checkout's;
2. `index WT --context wt-full`: pi-cgc's full index of the same worktree;
3. the two contexts' canonical dumps compared.

Prints one JSON line per case, then a table. Run from the project root.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import re
import shutil
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any, Dict, List

PROJECT = Path(__file__).resolve().parent.parent
_spec = importlib.util.spec_from_file_location("engine_adopt", PROJECT / "bench" / "engine-adopt.py")
assert _spec is not None and _spec.loader is not None
adopt_bench = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(adopt_bench)
ENTRY, CGC = adopt_bench.ENTRY, PROJECT / ".venv" / "bin" / "cgc"
PYTHON = adopt_bench.PYTHONS["kuzudb"]


def engine(args: List[str], cwd: Path, env: Dict[str, str]) -> subprocess.CompletedProcess[str]:
    done = subprocess.run([str(PYTHON), str(ENTRY), *args], cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=7200)
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(args[:3])} failed: {done.stderr[-2000:]}")
    return done


def context(name: str, cwd: Path, env: Dict[str, str]) -> None:
    subprocess.run([str(CGC), "context", "create", name, "--database", "kuzudb"], cwd=cwd, env=env, check=True,
                   capture_output=True, timeout=300)


def dump(root: Path, name: str, env: Dict[str, str]) -> List[str]:
    out = root.parent / f"{name}.dump"
    engine(["dump", "--root", str(root), "--context", name, "--out", str(out), "--dangling"], root, env)
    return out.read_text(encoding="utf-8").splitlines()


def case(work: Path, size: int, name: str) -> Dict[str, Any]:
    base = work / f"{size}-{name}"
    shutil.rmtree(base, ignore_errors=True)
    main = base / "proj"
    main.mkdir(parents=True)
    adopt_bench.make_tree(main, size)
    env = adopt_bench.env_of(base / "home", "kuzudb")
    started = time.monotonic()
    engine(["--cache-dir", str(base / "cache-main"), "index", str(main)], base, env)
    main_s = time.monotonic() - started
    worktree = base / name
    adopt_bench.git(main, "worktree", "add", "-q", "-b", "feature", str(worktree), "main")
    files = sorted(p for p in worktree.rglob("*.py"))
    with files[0].open("a", encoding="utf-8") as handle:
        handle.write("\n\ndef pi_cgc_bench_added(value):\n    return value\n")
    files[-1].unlink()
    (worktree / "pi_cgc_bench_new.py").write_text("def made_here(value):\n    return repr(value)\n", encoding="utf-8")
    adopt_bench.git(worktree, "add", "-A")
    adopt_bench.git(worktree, "commit", "-qm", "feature")
    context("wt-moved", worktree, env)
    started = time.monotonic()
    moved = engine(["--cache-dir", str(base / "cache-moved"), "index", str(worktree), "--context", "wt-moved",
                    "--from-main", str(main), "--main-cache-dir", str(base / "cache-main")], worktree, env)
    moved_s = time.monotonic() - started
    line = next((text for text in moved.stdout.splitlines() if "from the main checkout's graph in" in text), "")
    context("wt-full", worktree, env)
    started = time.monotonic()
    engine(["--cache-dir", str(base / "cache-full"), "index", str(worktree), "--context", "wt-full"], worktree, env)
    full_s = time.monotonic() - started
    differing = len(set(dump(worktree, "wt-moved", env)) ^ set(dump(worktree, "wt-full", env)))
    phases = dict(re.findall(r"(state|export|load|update|checkpoint) (\d+) ms", line))
    again = re.search(r"(\d+) resolved again", line)
    return {"files": size, "worktree": name, "mainIndexS": round(main_s, 1), "fromMainS": round(moved_s, 1),
            "taken": bool(line), "resolvedAgain": int(again.group(1)) if again else None,
            "phasesMs": {k: int(v) for k, v in phases.items()}, "fullIndexS": round(full_s, 1),
            "ratio": round(moved_s / full_s, 2), "differingLines": differing, "line": line}


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", default="1000")
    parser.add_argument("--names", default="proj-fix-parser")
    parser.add_argument("--work")
    args = parser.parse_args()
    work = Path(args.work) if args.work else Path(tempfile.mkdtemp(prefix="pi-cgc-bench-worktree-"))
    rows = []
    for size in (int(s) for s in args.sizes.split(",")):
        for name in args.names.split(","):
            row = case(work, size, name)
            print(json.dumps(row), flush=True)
            rows.append(row)
    print("| files | worktree folder | files resolved again | from the main checkout's graph | pi-cgc's full index "
          "of the worktree | ratio | graph against the full index |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    for row in rows:
        print(f"| {row['files']} | `{row['worktree']}` | {row['resolvedAgain']} | {row['fromMainS']} s | "
              f"{row['fullIndexS']} s | {row['ratio']}× | {row['differingLines']} lines differ |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
