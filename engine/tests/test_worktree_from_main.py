"""A new worktree's graph from its main checkout's (relocate.py, KùzuDB) equals a full index of the worktree: a git
repository indexed by pi-cgc's index, a linked worktree one commit apart (a file changed, one deleted, one added)
with an untracked file, and the main checkout with an uncommitted change its graph holds. The worktree's context is
made by `index --from-main`, another by the full index; their canonical dumps (`dump --dangling`) are compared line
for line. When the main checkout's cache is not the graph's model, the full index runs instead and says why."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Dict, List

from real_graph import CGC, ENTRY

FILES = {
    "pkg/__init__.py": "",
    "pkg/shapes.py": "class Shape:\n    def area(self):\n        return 0\n\n\nclass Square(Shape):\n"
                     "    def __init__(self, side):\n        self.side = side\n\n    def area(self):\n"
                     "        return self.side * self.side\n",
    "pkg/use.py": "from pkg.shapes import Square\n\n\ndef total(sides):\n    return sum(Square(s).area() for s in sides)\n",
    "pkg/more.py": "from pkg.use import total\n\n\ndef report(values):\n    return f'{total(values)}'\n",
    "pkg/gone.py": "from pkg.more import report\n\n\ndef shout(values):\n    return report(values).upper()\n",
    "app/main.py": "from pkg.more import report\nfrom pkg.gone import shout\n\n\ndef run():\n"
                   "    return report([1, 2]) + shout([3])\n",
}
GIT_ENV = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@x.invalid", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@x.invalid", "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": "/dev/null"}


def env_of(home: Path) -> Dict[str, str]:
    keep = {k: v for k, v in os.environ.items() if k in ("PATH", "LANG", "TREE_SITTER_LANGUAGE_PACK_LIBS_DIR")}
    home.mkdir(parents=True, exist_ok=True)
    return {**keep, "HOME": str(home), "COLUMNS": "10000", "ENABLE_AUTO_WATCH": "false", "PYTHONSAFEPATH": "1",
            "DEFAULT_DATABASE": "kuzudb"}


def git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, env={**os.environ, **GIT_ENV})


def engine(argv: List[str], cwd: Path, env: Dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, str(ENTRY), *argv], cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=600)


def context(name: str, env: Dict[str, str], cwd: Path) -> None:
    done = subprocess.run([str(CGC), "context", "create", name, "--database", "kuzudb"], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr


def dump(root: Path, name: str, env: Dict[str, str]) -> List[str]:
    """The canonical dump of context `name` (the global database when empty)."""
    out = root.parent / f"{name or 'global'}.dump"
    done = engine(["dump", "--root", str(root), *(["--context", name] if name else []), "--out", str(out),
                   "--dangling"], root, env)
    assert done.returncode == 0, done.stderr[-2000:]
    return out.read_text(encoding="utf-8").splitlines()


def repository(tmp_path: Path, files: Dict[str, str], worktree_name: str) -> tuple[Path, Path]:
    """`files` committed in tmp/main, and a linked worktree of it (branch `feature`) in tmp/`worktree_name`."""
    main = tmp_path / "main"
    for name, text in files.items():
        (main / name).parent.mkdir(parents=True, exist_ok=True)
        (main / name).write_text(text, encoding="utf-8")
    git(main, "init", "-q", "-b", "main")
    git(main, "add", "-A")
    git(main, "commit", "-qm", "base")
    worktree = tmp_path / worktree_name
    git(main, "worktree", "add", "-q", "-b", "feature", str(worktree))
    return main, worktree


def checkouts(tmp_path: Path, env: Dict[str, str]) -> tuple[Path, Path]:
    """The main checkout, indexed by pi-cgc's index (its cache in tmp/cache/main), and a linked worktree."""
    main, worktree = repository(tmp_path, FILES, "feature")
    # One commit apart: a function added (and called from another file), a file deleted, a file added.
    (worktree / "pkg/use.py").write_text(FILES["pkg/use.py"] + "\n\ndef average(sides):\n"
                                         "    return total(sides) / len(sides)\n", encoding="utf-8")
    (worktree / "app/main.py").write_text("from pkg.more import report\nfrom pkg.use import average\n\n\n"
                                          "def run():\n    return report([1, 2]) + str(average([3]))\n", encoding="utf-8")
    git(worktree, "rm", "-q", "pkg/gone.py")
    (worktree / "pkg/new.py").write_text("from pkg.use import average\n\n\ndef mean_of(xs):\n    return average(xs)\n",
                                         encoding="utf-8")
    git(worktree, "add", "-A")
    git(worktree, "commit", "-qm", "feature")
    (worktree / "app/extra.py").write_text("from pkg.new import mean_of\n\n\ndef go():\n    return mean_of([1])\n",
                                           encoding="utf-8")  # untracked
    # An uncommitted change in the main checkout, which its graph holds.
    (main / "pkg/more.py").write_text(FILES["pkg/more.py"] + "\n\ndef whisper(values):\n"
                                      "    return report(values).lower()\n", encoding="utf-8")
    done = engine(["--cache-dir", str(tmp_path / "cache" / "main"), "index", str(main)], main, env)
    assert done.returncode == 0, done.stderr[-2000:]
    return main, worktree


def test_a_new_worktree_from_its_main_checkouts_graph_equals_its_full_index(tmp_path: Path) -> None:
    env = env_of(tmp_path / "home")
    main, worktree = checkouts(tmp_path, env)
    context("wt-moved", env, worktree)
    moved = engine(["--cache-dir", str(tmp_path / "cache" / "moved"), "index", str(worktree), "--context", "wt-moved",
                    "--from-main", str(main), "--main-cache-dir", str(tmp_path / "cache" / "main")], worktree, env)
    assert moved.returncode == 0, moved.stderr[-2000:]
    assert "not taken over" not in moved.stderr, moved.stderr[-2000:]
    assert "from the main checkout's graph in" in moved.stdout, moved.stdout
    # use.py, app/main.py, gone.py, new.py, the untracked extra.py, and more.py (the main checkout's own change)
    assert "6 files that differ applied" in moved.stdout, moved.stdout
    context("wt-full", env, worktree)
    full = engine(["--cache-dir", str(tmp_path / "cache" / "full"), "index", str(worktree), "--context", "wt-full"],
                  worktree, env)
    assert full.returncode == 0, full.stderr[-2000:]
    expected = dump(worktree, "wt-full", env)
    assert any("average" in line for line in expected) and not any("gone.py" in line for line in expected)
    assert dump(worktree, "wt-moved", env) == expected
    # The worktree's engine starts warm and trusted from the cache the copy left.
    served = subprocess.run([sys.executable, str(ENTRY), "serve", "--root", str(worktree), "--context", "wt-moved",
                             "--cache-dir", str(tmp_path / "cache" / "moved")], cwd=worktree, env=env, input="",
                            capture_output=True, text=True, timeout=300)
    assert '"trusted": true' in served.stdout, served.stdout + served.stderr[-2000:]


def test_a_main_checkout_whose_cache_is_not_its_graphs_model_gives_the_full_index(tmp_path: Path) -> None:
    env = env_of(tmp_path / "home")
    main, worktree = checkouts(tmp_path, env)
    caches = list((tmp_path / "cache" / "main").glob("*.pickle"))
    assert len(caches) == 1
    caches[0].with_suffix(".untrusted").write_text("an update committed, its cache not saved yet\n")
    context("wt-moved", env, worktree)
    moved = engine(["--cache-dir", str(tmp_path / "cache" / "moved"), "index", str(worktree), "--context", "wt-moved",
                    "--from-main", str(main), "--main-cache-dir", str(tmp_path / "cache" / "main")], worktree, env)
    assert moved.returncode == 0, moved.stderr[-2000:]
    assert "the main checkout's graph was not taken over: the main checkout's graph may not be what its graph holds" \
        in moved.stderr, moved.stderr
    assert "from the main checkout's graph in" not in moved.stdout
    context("wt-full", env, worktree)
    full = engine(["--cache-dir", str(tmp_path / "cache" / "full"), "index", str(worktree), "--context", "wt-full"],
                  worktree, env)
    assert full.returncode == 0, full.stderr[-2000:]
    assert dump(worktree, "wt-moved", env) == dump(worktree, "wt-full", env)


# cgc resolves a call by name among same-named functions with a substring test of an imported name on each
# candidate's absolute path: here `zq` is found in the worktree's folder name, so the worktree's app calls pkg_a's
# helper, where the main checkout's calls pkg_b's (no candidate path of the main checkout holds `zq`).
ROOT_NAMED = {
    "pkg_a/__init__.py": "",
    "pkg_a/util.py": "def helper():\n    return 'a'\n",
    "pkg_b/__init__.py": "",
    "pkg_b/util.py": "def helper():\n    return 'b'\n",
    "zq.py": "VALUE = 1\n",
    "app.py": "import zq\nimport pkg_b\n\n\ndef run():\n    return helper() + str(zq.VALUE)\n",
}


def test_links_that_depend_on_the_worktrees_folder_name_are_resolved_there(tmp_path: Path) -> None:
    env = env_of(tmp_path / "home")
    main, worktree = repository(tmp_path, ROOT_NAMED, "feature-zq")
    done = engine(["--cache-dir", str(tmp_path / "cache" / "main"), "index", str(main)], main, env)
    assert done.returncode == 0, done.stderr[-2000:]
    context("wt-moved", env, worktree)
    moved = engine(["--cache-dir", str(tmp_path / "cache" / "moved"), "index", str(worktree), "--context", "wt-moved",
                    "--from-main", str(main), "--main-cache-dir", str(tmp_path / "cache" / "main")], worktree, env)
    assert moved.returncode == 0, moved.stderr[-2000:]
    assert "0 files that differ applied, 1 resolved again" in moved.stdout, moved.stdout + moved.stderr[-2000:]
    context("wt-full", env, worktree)
    full = engine(["--cache-dir", str(tmp_path / "cache" / "full"), "index", str(worktree), "--context", "wt-full"],
                  worktree, env)
    assert full.returncode == 0, full.stderr[-2000:]
    expected = dump(worktree, "wt-full", env)
    # The premise: at the worktree's root the call goes to pkg_a's helper, at the main checkout's to pkg_b's.
    calls = [line for line in expected if "CALLS" in line and '"name": "helper"' in line]
    assert calls and all("pkg_a/util.py" in line for line in calls), calls
    assert any("pkg_b/util.py" in line and '"name": "helper"' in line and "CALLS" in line
               for line in dump(main, "", env)), "the main checkout's graph does not call pkg_b's helper"
    assert dump(worktree, "wt-moved", env) == expected


def test_which_files_are_resolved_again_at_another_root() -> None:
    from pi_cgc_engine.files import FileEntry
    from pi_cgc_engine.relocate import root_sensitive

    def entry(*names: str) -> FileEntry:
        return FileEntry(0, 0, "", {"imports": [{"name": name} for name in names]}, {})

    files = {"/w/a.py": entry("os"), "/w/b.py": entry("json"), "/w/c.py": entry("me.proj"), "/w/d.py": entry("eat")}
    # "os" and "json" are in neither root, "me/proj" in both; "eat" is in "feature" only.
    assert root_sensitive(files, "/home/me/proj", "/home/me/proj-feature") == ["/w/d.py"]
    # A name that may begin at the end of a root and go on in the file's path: "ta/b" after ".../da".
    assert root_sensitive({"/w/e.py": entry("ta.b")}, "/home/me/proj", "/home/me/data") == ["/w/e.py"]
    assert root_sensitive(files, "/home/me/proj", "/home/me/proj") == []
